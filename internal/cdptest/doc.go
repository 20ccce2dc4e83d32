// Package cdptest holds the CDP clients of the tests and tools: Client,
// which records every frame in order for tests to search and wait on (the
// calls with their replies, events, unsolicited messages and the close
// frame the relay sent); and Conn, a lean pipelined connection that
// records nothing, for benchmarks and load, whose own cost must stay small
// and the same on every path it is compared on.
package cdptest
