// Package secrets holds the secrets an operator lets automation type by
// reference: a client sends "{{secret:NAME}}" and the relay types the
// value, on the secret's own origins only. Values are read from their
// source (an environment variable, a file, or a secret manager's command)
// each time they are needed, kept in memory only as long as that takes,
// and never logged, audited, counted or put in an error message.
package secrets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Config is one secret of the config file.
type Config struct {
	// Name is what a reference names: {{secret:NAME}}. Letters, digits,
	// '_', '-' and '.'.
	Name string `json:"name"`
	// Origins are where the secret may be typed: scheme://host[:port].
	// Required.
	Origins []string `json:"origins"`
	// Exactly one source: an environment variable of the relay, a file
	// (its content, without the trailing newline), or a command run
	// without a shell, whose standard output (trimmed) is the value.
	Env     string   `json:"env,omitempty"`
	File    string   `json:"file,omitempty"`
	Command []string `json:"command,omitempty"`
	// Fields is what the secret may be typed into: "password" (the
	// default), a password field only, whose text the page shows as dots
	// in screenshots and the live view; or "any", any field that takes
	// text (a one-time code, an API key), whose text a screenshot shows.
	Fields string `json:"fields,omitempty"`
}

// The kinds of field a secret may be typed into.
const (
	FieldsPassword = "password"
	FieldsAny      = "any"
)

// CommandTimeout bounds a command source.
const CommandTimeout = 10 * time.Second

// Store is the configured secrets. It is immutable and safe for concurrent
// use; a reload builds a new one.
type Store struct {
	byName map[string]Config
	names  []string
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// New validates the secrets and returns a store. The errors name secrets
// and fields, never values.
func New(list []Config) (*Store, error) {
	s := &Store{byName: map[string]Config{}}
	var errs []error
	for i, c := range list {
		where := fmt.Sprintf("secrets[%d]", i)
		if c.Name != "" {
			where = fmt.Sprintf("secret %q", c.Name)
		}
		if !nameRE.MatchString(c.Name) {
			errs = append(errs, fmt.Errorf("%s: a name of letters, digits, '_', '-' and '.' is required", where))
			continue
		}
		if _, dup := s.byName[c.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: named twice", where))
			continue
		}
		sources := 0
		for _, set := range []bool{c.Env != "", c.File != "", len(c.Command) > 0} {
			if set {
				sources++
			}
		}
		if sources != 1 {
			errs = append(errs, fmt.Errorf("%s: exactly one of env, file and command is required", where))
		}
		switch c.Fields {
		case "":
			c.Fields = FieldsPassword
		case FieldsPassword, FieldsAny:
		default:
			errs = append(errs, fmt.Errorf("%s: fields is %q or %q, not %q", where, FieldsPassword, FieldsAny, c.Fields))
		}
		if len(c.Origins) == 0 {
			errs = append(errs, fmt.Errorf("%s: origins are required (where the secret may be typed, https://host)", where))
		}
		var origins []string
		for _, o := range c.Origins {
			n, err := NormalizeOrigin(o)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: origin %q: %v", where, o, err))
				continue
			}
			origins = append(origins, n)
		}
		c.Origins = origins
		c.Command = slices.Clone(c.Command)
		s.byName[c.Name] = c
		s.names = append(s.names, c.Name)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.Sort(s.names)
	return s, nil
}

// NormalizeOrigin reads scheme://host[:port], lower case, without a
// default port.
func NormalizeOrigin(o string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", errors.New("not an origin (scheme://host[:port])")
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", errors.New("an origin has no path, query, fragment or userinfo")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// Names are the secrets' names, sorted.
func (s *Store) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.names)
}

// Origins returns where secret name may be typed, and whether it exists.
func (s *Store) Origins(name string) ([]string, bool) {
	if s == nil {
		return nil, false
	}
	c, ok := s.byName[name]
	return c.Origins, ok
}

// AnyField reports whether secret name may be typed into any field that
// takes text, not only a password field.
func (s *Store) AnyField(name string) bool {
	return s != nil && s.byName[name].Fields == FieldsAny
}

// Allowed reports whether secret name may be typed on origin.
func (s *Store) Allowed(name, origin string) bool {
	os, ok := s.Origins(name)
	if !ok {
		return false
	}
	n, err := NormalizeOrigin(origin)
	return err == nil && slices.Contains(os, n)
}

// Value reads secret name from its source. The error says what failed and
// never carries the value or the source's output.
func (s *Store) Value(ctx context.Context, name string) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("no secret %q is configured", name)
	}
	c, ok := s.byName[name]
	if !ok {
		return nil, fmt.Errorf("no secret %q is configured", name)
	}
	var v []byte
	switch {
	case c.Env != "":
		e, ok := os.LookupEnv(c.Env)
		if !ok || e == "" {
			return nil, fmt.Errorf("secret %q: the environment variable %s is not set", name, c.Env)
		}
		v = []byte(e)
	case c.File != "":
		b, err := os.ReadFile(c.File)
		if err != nil {
			return nil, fmt.Errorf("secret %q: cannot read its file: %v", name, errors.Unwrap(err))
		}
		v = bytes.TrimRight(b, "\r\n")
	default:
		ctx, cancel := context.WithTimeout(ctx, CommandTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, c.Command[0], c.Command[1:]...)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("secret %q: its command did not finish in %s", name, CommandTimeout)
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, fmt.Errorf("secret %q: its command failed (exit status %d)", name, ee.ExitCode())
			}
			return nil, fmt.Errorf("secret %q: its command could not run: %v", name, errors.Unwrap(err))
		}
		v = bytes.TrimSpace(out.Bytes())
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("secret %q: its source gave an empty value", name)
	}
	return v, nil
}

// Explain describes the secrets for people, without their values.
func (s *Store) Explain() string {
	if s == nil || len(s.names) == 0 {
		return "secrets: none\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "secrets: %d, typed by reference ({{secret:NAME}}), only on their origins\n", len(s.names))
	for _, n := range s.names {
		c := s.byName[n]
		var src string
		switch {
		case c.Env != "":
			src = "environment variable " + c.Env
		case c.File != "":
			src = "file " + c.File
		default:
			src = "command " + c.Command[0]
		}
		into := "password fields"
		if c.Fields == FieldsAny {
			into = "any field"
		}
		fmt.Fprintf(&b, "  %s: into %s on %s, from %s\n", n, into, strings.Join(c.Origins, ", "), src)
	}
	return b.String()
}

// Ref is the reference to secret name.
func Ref(name string) string { return "{{secret:" + name + "}}" }

// ParseRef returns the name a reference names when text is one reference
// and nothing else; partial reports a text that holds a reference among
// other text (refused: a reference must be the whole text).
func ParseRef(text string) (name string, whole, partial bool) {
	if strings.HasPrefix(text, "{{secret:") && strings.HasSuffix(text, "}}") {
		n := text[len("{{secret:") : len(text)-2]
		if nameRE.MatchString(n) {
			return n, true, false
		}
	}
	return "", false, strings.Contains(text, "{{secret:")
}
