package app

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/cdprelay/cdprelay/internal/ingress"
)

const exampleConfig = "../../docs/config.example.yaml"

func TestExampleConfigIsValid(t *testing.T) {
	f, err := ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	text, err := f.Explain()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bob-agent: cdp (tenant bob's instances only)", "ops: viewer,admin (the operator's: every instance)", "tenants: bob; at most 4 instances each; counted in cdprelay_tenant_instances", "bob's instances: profile strict"} {
		if !strings.Contains(text, want) {
			t.Errorf("Explain lacks %q:\n%s", want, text)
		}
	}
}

// TestExampleConfigIsComplete: the example shows every field the file can
// hold, so that it documents them all.
func TestExampleConfigIsComplete(t *testing.T) {
	b, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var missing []string
	checkFields(reflect.TypeFor[File](), []any{doc}, "", &missing)
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s lacks %s", exampleConfig, strings.Join(missing, ", "))
	}
	docs, err := os.ReadFile("../../docs/CONFIG.md")
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	collectNames(reflect.TypeFor[File](), &fields)
	for _, f := range fields {
		if !strings.Contains(string(docs), "`"+f+"`") && !strings.Contains(string(docs), "`"+f+".") && !strings.Contains(string(docs), "."+f+"`") {
			t.Errorf("docs/CONFIG.md does not name the field %s", f)
		}
	}
}

// checkFields reports the fields of typ that none of the values holds.
func checkFields(typ reflect.Type, vals []any, path string, missing *[]string) {
	switch typ.Kind() {
	case reflect.Pointer:
		checkFields(typ.Elem(), vals, path, missing)
	case reflect.Slice:
		var elems []any
		for _, v := range vals {
			if s, ok := v.([]any); ok {
				elems = append(elems, s...)
			}
		}
		checkFields(typ.Elem(), elems, path+"[]", missing)
	case reflect.Map:
		var elems []any
		for _, v := range vals {
			if m, ok := v.(map[string]any); ok {
				for _, e := range m {
					elems = append(elems, e)
				}
			}
		}
		checkFields(typ.Elem(), elems, path+".*", missing)
	case reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			var sub []any
			for _, v := range vals {
				if m, ok := v.(map[string]any); ok {
					if x, ok := m[name]; ok {
						sub = append(sub, x)
					}
				}
			}
			if len(sub) == 0 {
				*missing = append(*missing, strings.TrimPrefix(path+"."+name, "."))
				continue
			}
			checkFields(f.Type, sub, path+"."+name, missing)
		}
	}
}

func collectNames(typ reflect.Type, out *[]string) {
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		collectNames(typ.Elem(), out)
	case reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			*out = append(*out, name)
			collectNames(f.Type, out)
		}
	}
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"unknown field", "tokens:\n  - name: a\n    sha256: " + strings.Repeat("ab", 32) + "\n    scope: [cdp]\n", "unknown field"},
		{"no scopes", "tokens:\n  - name: a\n    sha256: " + strings.Repeat("ab", 32) + "\n", "tokens[0] (a): scopes"},
		{"bad host", "hosts: [\"https://relay.example.com\"]\n", "hosts[0]"},
		{"bad origin", "origins:\n  cdp: [\"*\"]\n", "origins.cdp[0]"},
		{"bad extension", "origins:\n  extension_ids: [abc]\n", "origins.extension_ids[0]"},
		{"tls half", "tls:\n  cert: /x.pem\n", "tls needs both"},
		{"bad tenant", "tokens:\n  - name: a\n    sha256: " + strings.Repeat("ab", 32) + "\n    scopes: [cdp]\n    tenant: Alice\n", `tenant "Alice"`},
		{"negative tenant bound", "tenants:\n  max_instances: -1\n", "tenants.max_instances"},
		{"profile of nobody's tenant", "tenants:\n  profiles: {bob: x}\n", `no token names the tenant "bob"`},
		{"tenant's unknown profile", "tokens:\n  - name: a\n    sha256: " + strings.Repeat("ab", 32) + "\n    scopes: [cdp]\n    tenant: bob\ntenants:\n  profiles: {bob: nope}\n", `tenants.profiles.bob: "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := t.TempDir() + "/c.yaml"
			if err := os.WriteFile(p, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := ReadFile(p)
			if err == nil {
				err = f.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadFile, Validate: %v, want %q", err, tt.want)
			}
		})
	}
}

// TestExplainPersonPower: check-config says what the person's credential
// guards, and which tokens can never act as the person.
func TestExplainPersonPower(t *testing.T) {
	f := &File{}
	x, err := f.Explain()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x, "the person's actions (Stop, Resume, approvals, dialogs, taking over a tab, removing an instance) need the person key") {
		t.Errorf("zero-config:\n%s", x)
	}
	f.Tokens = []ingress.Token{
		{Name: "agent", SHA256: ingress.HashToken("a"), Scopes: []string{"cdp"}},
		{Name: "agent-ops", SHA256: ingress.HashToken("b"), Scopes: []string{"cdp", "admin"}},
		{Name: "watch", SHA256: ingress.HashToken("c"), Scopes: []string{"viewer-interactive"}},
	}
	if x, err = f.Explain(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x, "agent-ops carries cdp: it never acts as the person") {
		t.Errorf("a token with cdp and admin:\n%s", x)
	}
	for _, name := range []string{"agent", "watch"} {
		if strings.Contains(x, "    "+name+" carries cdp") {
			t.Errorf("%s flagged:\n%s", name, x)
		}
	}
}
