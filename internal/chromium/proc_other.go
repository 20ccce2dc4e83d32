//go:build !unix && !windows

package chromium

import (
	"errors"
	"log/slog"
	"os/exec"
)

func newTree(*exec.Cmd, *slog.Logger) (tree, error) {
	return nil, errors.New("launching a browser is not supported on this system")
}
