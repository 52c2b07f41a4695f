package localstack

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// syncBuffer is an io.Writer that Supervise's goroutines may share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestSuperviseSaysWhenARestartedComponentIsReadyAgain(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if _, err := os.Stat(ready); err != nil {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer health.Close()
	// The first run crashes at once; the restarted one becomes healthy and
	// stays up.
	script := fmt.Sprintf(`if [ -e %[1]s/ran ]; then touch %[2]s; exec sleep 600; fi; touch %[1]s/ran; exit 3`, dir, ready)
	comp := Component{Name: "test/crashy", Args: []string{"-c", script}, LogFile: filepath.Join(dir, "crashy.log"), HealthURL: health.URL}
	out := &syncBuffer{}
	s := &Stack{Supervisor: NewSupervisor("/bin/sh"), out: out, started: time.Now(),
		healthClients: map[string]*http.Client{comp.Name: health.Client()}}
	if _, err := s.Supervisor.Start(comp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	supervised := make(chan struct{})
	go func() {
		s.Supervise(ctx)
		close(supervised)
	}()
	defer func() {
		cancel()
		<-supervised
		s.Supervisor.Stop(5 * time.Second)
	}()

	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "test/crashy is ready again") {
		if time.Now().After(deadline) {
			t.Fatalf("no 'ready again' line within 30s; output:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := out.String()
	crashed := strings.Index(got, "test/crashy exited (exit status 3); restarting in 1s")
	if crashed < 0 || crashed > strings.Index(got, "is ready again") {
		t.Errorf("want the crash and its restart reported before 'ready again'; output:\n%s", got)
	}
	if _, err := os.Stat(ready); err != nil {
		t.Errorf("'ready again' printed before the restarted process was healthy: %v", err)
	}
}

func TestRestartDelayDoublesAndResetsAfterALongRun(t *testing.T) {
	now := clocktesting.NewFakeClock(time.Now())
	b := newRestartBackoff()
	b.Clock = now
	// Each step: how long the component ran since its previous exit, then
	// the delay its next exit gets.
	for i, tt := range []struct {
		ran, want time.Duration
	}{
		{0, time.Second},               // a first exit
		{time.Second, 2 * time.Second}, // doubling
		{time.Second, 4 * time.Second},
		{5 * time.Second, 8 * time.Second},
		{5 * time.Second, 16 * time.Second},
		{5 * time.Second, 30 * time.Second}, // capped
		{5 * time.Second, 30 * time.Second},
		{61 * time.Second, time.Second}, // a long run starts again
		{time.Hour, time.Second},
		{time.Second, 2 * time.Second},
	} {
		now.Step(tt.ran)
		b.Next("c", now.Now())
		if got := b.Get("c"); got != tt.want {
			t.Errorf("exit %d, %s after the one before: delay %s, want %s", i+1, tt.ran, got, tt.want)
		}
	}
}
