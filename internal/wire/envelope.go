package wire

import (
	"errors"
)

// Envelope is the top level of a CDP message from a client: only what the
// relay needs to route it. Every slice aliases the decoded frame.
type Envelope struct {
	ID        int64
	HasID     bool
	Method    []byte // unquoted; decoded when it had escapes
	SessionID []byte // unquoted; nil when absent
	Params    []byte // raw object span; nil when absent or null
}

// Errors a client message can earn. The relay answers each with a CDP error
// in the shape Chrome uses for the same mistake.
var (
	ErrNoID         = errors.New("message must have integer 'id' property")
	ErrNoMethod     = errors.New("message must have string 'method' property")
	ErrBadSession   = errors.New("message must have string 'sessionId' property")
	ErrBadParams    = errors.New("message must have object 'params' property")
	ErrDuplicateKey = errors.New("message has a duplicate top-level property")
)

// DecodeCommand validates frame and fills e with its envelope. A frame that
// is not valid JSON yields a *SyntaxError; a valid one with a malformed
// envelope yields one of the Err values above, with e.ID set when the id
// itself was usable so that the error can be addressed to it.
func DecodeCommand(frame []byte, e *Envelope) error {
	*e = Envelope{}
	o, err := openTopObject(frame)
	if err != nil {
		return err
	}
	var seenID, seenMethod, seenSession, seenParams, dup bool
	var idErr error
	for {
		key, esc, val, ok := o.next()
		if !ok {
			break
		}
		if dup {
			// The rest is only validated: malformed JSON must still win.
			continue
		}
		if esc {
			// Keys with escapes are legal JSON; compare their decoded form so
			// that "\u006dethod" cannot slip past as an unknown key.
			key = decodeEscaped(key)
		}
		switch string(key) {
		case "id":
			if dup = seenID; dup {
				continue
			}
			seenID = true
			if n, ok := parseInt(val); ok {
				e.ID, e.HasID = n, true
			} else {
				idErr = ErrNoID
			}
		case "method":
			if dup = seenMethod; dup {
				continue
			}
			seenMethod = true
			s, ok := unquote(val)
			if !ok {
				err = firstErr(err, ErrNoMethod)
				continue
			}
			e.Method = s
		case "sessionId":
			if dup = seenSession; dup {
				continue
			}
			seenSession = true
			s, ok := unquote(val)
			if !ok {
				err = firstErr(err, ErrBadSession)
				continue
			}
			e.SessionID = s
		case "params":
			if dup = seenParams; dup {
				continue
			}
			seenParams = true
			switch val[0] {
			case '{':
				e.Params = val
			case 'n': // null: as if absent
			default:
				err = firstErr(err, ErrBadParams)
			}
		}
	}
	if o.err != nil {
		*e = Envelope{}
		return o.err
	}
	if dup {
		return ErrDuplicateKey
	}
	if idErr != nil {
		return idErr
	}
	if !e.HasID {
		return ErrNoID
	}
	if err != nil {
		return err
	}
	if len(e.Method) == 0 {
		return ErrNoMethod
	}
	return nil
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
