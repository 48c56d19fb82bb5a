package audit

// twMutants are the timer-wheel and inactivity-cop mutants (TW-*).
var twMutants = []Mutant{}
