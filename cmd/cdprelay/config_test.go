package main

import "testing"

const exampleConfig = "../../docs/config.example.yaml"

func TestExampleConfigIsAccepted(t *testing.T) {
	if code := checkConfig([]string{exampleConfig}); code != 0 {
		t.Fatalf("check-config %s exited %d", exampleConfig, code)
	}
	if _, err := loadConfig(exampleConfig, policyFlags{}); err != nil {
		t.Fatal(err)
	}
}
