// Command dist finishes a release folder that `make dist` has put the
// binaries in: it adds the extension as two zips (cdprelay-extension.zip
// to unpack and load with "Load unpacked", cdprelay-extension-store.zip
// for the Chrome Web Store), writes SHA256SUMS over every file, in the
// format `sha256sum -c` and `shasum -a 256 -c` read, and prints what the
// folder holds with sizes.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cdprelay/cdprelay/extension"
)

const sumsFile = "SHA256SUMS"

func main() {
	dir := flag.String("dir", "dist", "the release folder")
	flag.Parse()
	if err := run(*dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run(dir string, out io.Writer) error {
	for _, z := range []struct {
		name     string
		forStore bool
	}{{"cdprelay-extension.zip", false}, {"cdprelay-extension-store.zip", true}} {
		var b bytes.Buffer
		if err := extension.WriteZip(&b, z.forStore); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, z.name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != sumsFile {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var sums bytes.Buffer
	fmt.Fprintf(out, "%-30s %22s  %s\n", "file", "bytes", "sha256")
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		hexSum := hex.EncodeToString(sum[:])
		// Two spaces: the text-mode line both checkers read.
		fmt.Fprintf(&sums, "%s  %s\n", hexSum, name)
		fmt.Fprintf(out, "%-30s %22s  %s\n", name, size(len(data)), hexSum)
	}
	if err := os.WriteFile(filepath.Join(dir, sumsFile), sums.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "%-30s %22s\n", sumsFile, size(sums.Len()))
	return nil
}

// size is n bytes with thousands marked, and in MiB from one MiB on.
func size(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n >= 1<<20 {
		s += fmt.Sprintf(" (%.1f MiB)", float64(n)/(1<<20))
	}
	return s
}
