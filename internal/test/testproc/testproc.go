// Package testproc runs Flotilla's binary (and a headless browser) beside a test or benchmark: a
// component started in the background and stopped when the test ends, on a
// free local port.
package testproc

import (
	"context"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// StopGrace is how long a background process has to exit after SIGTERM
// before it is killed.
const StopGrace = 15 * time.Second

// Background starts bin with args, its stdout and stderr in the file log,
// and stops it when t ends (SIGTERM, then SIGKILL after StopGrace). It fails
// t when the log cannot be created or the process cannot start.
func Background(t testing.TB, bin, log string, args ...string) *exec.Cmd {
	t.Helper()
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(StopGrace):
			_ = cmd.Process.Kill()
			<-done
		}
		f.Close()
	})
	return cmd
}

// FreePort returns a TCP port free on 127.0.0.1 right now (another process
// may take it before the caller binds it).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// MachineIPv4 is a non-loopback, non-link-local IPv4 address of this
// machine, for a stand-in backend that a member's EndpointSlice points at
// (an EndpointSlice may not hold a loopback address). It skips tb when the
// machine has none.
func MachineIPv4(tb testing.TB) string {
	tb.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range addrs {
		if n, isNet := a.(*net.IPNet); isNet && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	tb.Skip("this machine has no non-loopback IPv4 address for the stand-in backends")
	return ""
}

// Chromium returns the path of a Chromium or Chrome binary for the tests
// and benches that drive a real browser: $FLOTILLA_CHROMIUM, else the first
// of chromium, chromium-browser, google-chrome and google-chrome-stable on
// the PATH; "" when there is none.
func Chromium() string {
	for _, name := range []string{os.Getenv("FLOTILLA_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser starts the headless browser at path (Chromium's sandbox off, as
// for root in CI; certificate errors ignored, for the stack's own CA; a
// 1400×1000 window) and returns a tab's context, closed when tb ends.
func Browser(tb testing.TB, path string) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("ignore-certificate-errors", true), chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}
