package pods

import "time"

func nsDur(ns int64) time.Duration { return time.Duration(ns) }
