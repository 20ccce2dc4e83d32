package cdp

import (
	"encoding/json"
	"testing"
)

// A refusal of script reads as the script's own Error: the exception a
// client reports, with the message, and no result a client would take for
// a value.
func TestThrown(t *testing.T) {
	var r struct {
		Result struct {
			Type, Subtype, ClassName, Description string
		}
		ExceptionDetails struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	if err := json.Unmarshal(Thrown(`cdprelay: "no" <here>`), &r); err != nil {
		t.Fatal(err)
	}
	want := `Error: cdprelay: "no" <here>`
	if r.Result.Type != "object" || r.Result.Subtype != "error" || r.Result.ClassName != "Error" || r.Result.Description != want {
		t.Errorf("result %+v", r.Result)
	}
	if r.ExceptionDetails.Text != "Uncaught" || r.ExceptionDetails.Exception.Description != want {
		t.Errorf("exceptionDetails %+v", r.ExceptionDetails)
	}
}
