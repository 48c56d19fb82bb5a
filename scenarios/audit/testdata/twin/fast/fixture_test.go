// Package fast shares its name with testdata/order/fast: go test -c -o
// DIR/ would write both test binaries to DIR/fast.test
// (TestBuildTestsBuildsTogetherOrOneByOne).
package fast

import "testing"

func TestTwin(t *testing.T) {}
