package tiers

// Level is what automation may do with a tab or a frame: everything the
// policy allows (Full), read but not act (ReadOnly), or see nothing and
// only leave (Blind). The levels are ordered: a greater one is stricter.
type Level uint8

const (
	Full Level = iota
	ReadOnly
	Blind
)

func (a Level) String() string {
	switch a {
	case ReadOnly:
		return "read-only"
	case Blind:
		return "blind"
	}
	return "full"
}
