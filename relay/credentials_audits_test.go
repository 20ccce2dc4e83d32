package relay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// Audits.issueAdded quotes what Chrome objected to: the raw Set-Cookie
// line of a cookie it would not store, and the signature base it built
// from a response's (and its request's) headers for a signature that did
// not verify. The values of the person's cookies and credential headers in
// them reach no client; the names and attributes that make the issue
// worth reading do, and other issues come as Chrome sent them.
func TestCredentialsAuditsIssues(t *testing.T) {
	h := newHarness(t, config.Config{RedactHeaders: []string{"X-Api-Key"}})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)

	cookieIssue := map[string]any{"issue": map[string]any{"code": "CookieIssue", "details": map[string]any{"cookieIssueDetails": map[string]any{
		"rawCookieLine":          "sid=httponly-session-value; Path=/; HttpOnly; Secure; SameSite=None; Max-Age=3600; theme=second-value; loose-text",
		"cookieWarningReasons":   []string{},
		"cookieExclusionReasons": []string{"ExcludeSameSiteNoneInsecure"},
		"operation":              "SetCookie",
		"cookieUrl":              "https://a.example/",
		"request":                map[string]any{"requestId": "R1", "url": "https://a.example/"},
	}}}}
	base := strings.Join([]string{
		`"unencoded-digest";sf: sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:`,
		`"set-cookie": sid=rotated-session-value; HttpOnly`,
		`"authorization";req: Bearer cached-bearer-token`,
		`"x-api-key";req;bs: :dGhlLWFwaS1rZXk=:`,
		`"content-type": text/javascript`,
		`"@path";req: /app.js`,
		`"@signature-params": ("unencoded-digest";sf "set-cookie" "authorization";req "x-api-key";req;bs "content-type" "@path";req);keyid="JrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=";tag="ed25519-integrity"`,
	}, "\n")
	sriIssue := map[string]any{"issue": map[string]any{"code": "SRIMessageSignatureIssue", "details": map[string]any{"sriMessageSignatureIssueDetails": map[string]any{
		"error":               "ValidationFailedSignatureMismatch",
		"signatureBase":       base,
		"integrityAssertions": []string{},
		"request":             map[string]any{"requestId": "R2", "url": "https://a.example/app.js"},
	}}}}
	otherIssue := map[string]any{"issue": map[string]any{"code": "GenericIssue", "details": map[string]any{"genericIssueDetails": map[string]any{
		"errorType": "FormLabelForNameError", "frameId": "F", "violatingNodeAttribute": "for",
	}}}}

	from := len(c.Messages())
	for _, p := range []any{cookieIssue, sriIssue, otherIssue} {
		e.Event(1, "", "Audits.issueAdded", p)
	}
	var got []cdptestMessage
	for range 3 {
		m, i := h.event(c, from, "Audits.issueAdded")
		got = append(got, cdptestMessage{m.Raw, m.Params})
		from = i + 1
	}
	for _, m := range got {
		for _, leak := range []string{"httponly-session-value", "second-value", "loose-text", "rotated-session-value", "cached-bearer-token", "dGhlLWFwaS1rZXk"} {
			if strings.Contains(string(m.raw), leak) {
				t.Fatalf("%s reached the client: %s", leak, m.raw)
			}
		}
	}

	var ci struct {
		Issue struct {
			Details struct {
				CookieIssueDetails struct {
					RawCookieLine string `json:"rawCookieLine"`
					CookieURL     string `json:"cookieUrl"`
				} `json:"cookieIssueDetails"`
			} `json:"details"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(got[0].params, &ci); err != nil {
		t.Fatal(err)
	}
	if want := "sid=cdprelay-redacted:22; Path=/; HttpOnly; Secure; SameSite=None; Max-Age=3600; theme=cdprelay-redacted:12; cdprelay-redacted:10"; ci.Issue.Details.CookieIssueDetails.RawCookieLine != want {
		t.Errorf("rawCookieLine:\n got %q\nwant %q", ci.Issue.Details.CookieIssueDetails.RawCookieLine, want)
	}
	if ci.Issue.Details.CookieIssueDetails.CookieURL != "https://a.example/" {
		t.Errorf("the rest of the cookie issue: %s", got[0].params)
	}

	var si struct {
		Issue struct {
			Details struct {
				SRI struct {
					SignatureBase string `json:"signatureBase"`
				} `json:"sriMessageSignatureIssueDetails"`
			} `json:"details"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(got[1].params, &si); err != nil {
		t.Fatal(err)
	}
	wantBase := strings.Join([]string{
		`"unencoded-digest";sf: sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:`,
		`"set-cookie": cdprelay-redacted:35`,
		`"authorization";req: cdprelay-redacted:26`,
		`"x-api-key";req;bs: cdprelay-redacted:18`,
		`"content-type": text/javascript`,
		`"@path";req: /app.js`,
		`"@signature-params": ("unencoded-digest";sf "set-cookie" "authorization";req "x-api-key";req;bs "content-type" "@path";req);keyid="JrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=";tag="ed25519-integrity"`,
	}, "\n")
	if si.Issue.Details.SRI.SignatureBase != wantBase {
		t.Errorf("signatureBase:\n got %q\nwant %q", si.Issue.Details.SRI.SignatureBase, wantBase)
	}

	sent, _ := json.Marshal(otherIssue)
	var a, b any
	json.Unmarshal(sent, &a)
	json.Unmarshal(got[2].params, &b)
	if toJSONString(a) != toJSONString(b) {
		t.Errorf("another issue changed:\n got %s\nsent %s", got[2].params, sent)
	}
}

type cdptestMessage struct{ raw, params json.RawMessage }

func toJSONString(v any) string { b, _ := json.Marshal(v); return string(b) }
