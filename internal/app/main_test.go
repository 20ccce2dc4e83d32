package app

import (
	"testing"

	"github.com/cdprelay/cdprelay/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
