package collector

// UnderRace is underRace for the external test package.
const UnderRace = underRace
