package audit

// drMutants are the metrics-drain mutants (DR-*).
var drMutants = []Mutant{}
