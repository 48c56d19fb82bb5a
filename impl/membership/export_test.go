package membership

// CompareIDs exposes the snapshot order to the external tests.
var CompareIDs = compareIDs
