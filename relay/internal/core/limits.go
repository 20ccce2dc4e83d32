package core

import (
	"strconv"
)

// The words of the client's limits (the Limits stage, pipeline.go).

func msgRateLimit(perSecond float64) string {
	return "cdprelay: rate limit: more than " + strconv.FormatFloat(perSecond, 'f', -1, 64) + " commands per second"
}

func msgInFlight(n int) string {
	return "cdprelay: " + strconv.Itoa(n) + " commands are already waiting for the browser; wait for replies"
}
