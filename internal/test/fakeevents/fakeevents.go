// Package fakeevents helps tests read what a client-go record.FakeRecorder
// received.
package fakeevents

import "k8s.io/client-go/tools/record"

// Drain returns, in order, the events f holds now ("<type> <reason>
// <message>" each), without waiting for more.
func Drain(f *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-f.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
