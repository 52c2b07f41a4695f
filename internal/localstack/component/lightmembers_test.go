package component

import (
	"net"
	"net/http"
	"slices"
	"testing"
	"time"
)

func TestSplitOn(t *testing.T) {
	got := splitOn([]string{"--health-port=1", "--", "member1", "--secure-port=2", "--", "member2"}, "--")
	want := [][]string{{"--health-port=1"}, {"member1", "--secure-port=2"}, {"member2"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("splitOn = %q, want %q", got, want)
	}
}

// TestPausableListener: paused, a member answers nothing (a client times
// out, as with a stopped process); resumed, it answers again.
func TestPausableListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pl := newPausableListener(ln)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.Serve(pl) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String()
	hc := &http.Client{Timeout: 500 * time.Millisecond}
	get := func() error {
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("before the pause: %v", err)
	}
	pl.Pause()
	if err := get(); err == nil {
		t.Fatal("paused, the member still answered")
	}
	pl.Resume()
	if err := get(); err != nil {
		t.Fatalf("resumed: %v", err)
	}
}
