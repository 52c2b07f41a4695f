package localstack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Supervisor starts the stack's components as child processes of this
// binary and stops them. Each child gets SIGKILL from the kernel if the
// supervisor dies (PR_SET_PDEATHSIG), so no child outlives it, even after
// `kill -9`, and each runs in its own process group so that a Ctrl-C in the
// terminal reaches only the supervisor, which then stops them in order.
type Supervisor struct {
	exe    string
	spawns chan spawnRequest

	mu       sync.Mutex
	procs    map[string]*Process
	stopping bool
}

// Process is one running (or exited) child.
type Process struct {
	Component Component
	cmd       *exec.Cmd
	done      chan struct{}
	err       error
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the process's exit error, valid after Done is closed.
func (p *Process) Err() error { return p.err }

type spawnRequest struct {
	cmd   *exec.Cmd
	reply chan error
}

// NewSupervisor returns a supervisor that runs exe (normally this binary).
func NewSupervisor(exe string) *Supervisor {
	s := &Supervisor{exe: exe, spawns: make(chan spawnRequest), procs: map[string]*Process{}}
	go s.spawner()
	return s
}

// spawner forks every child from one OS thread that never exits: the kernel
// delivers the parent-death signal when the forking *thread* dies, so a
// short-lived thread would kill children early.
func (s *Supervisor) spawner() {
	runtime.LockOSThread()
	for req := range s.spawns {
		req.reply <- req.cmd.Start()
	}
}

// Start launches c, appending its output to c.LogFile. Errors: the log file
// cannot be opened or the process cannot be started.
func (s *Supervisor) Start(c Component) (*Process, error) {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return nil, errors.New("the stack is stopping")
	}
	s.mu.Unlock()
	log, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", c.Name, err)
	}
	fmt.Fprintf(log, "\n==== flotilla: starting %s at %s ====\n", c.Name, time.Now().Format(time.RFC3339))
	cmd := exec.Command(s.exe, c.Args...)
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	reply := make(chan error)
	s.spawns <- spawnRequest{cmd: cmd, reply: reply}
	if err := <-reply; err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", c.Name, err)
	}
	p := &Process{Component: c, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	s.mu.Lock()
	s.procs[c.Name] = p
	s.mu.Unlock()
	return p, nil
}

// Processes returns the current processes.
func (s *Supervisor) Processes() []*Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Process, 0, len(s.procs))
	for _, p := range s.procs {
		out = append(out, p)
	}
	return out
}

// Stopping reports whether Stop has begun.
func (s *Supervisor) Stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// Stop stops every child: first the components that talk to API servers
// (controllers, schedulers, kwok), then the API servers with their etcd.
// Each gets SIGTERM and, after grace, SIGKILL.
func (s *Supervisor) Stop(grace time.Duration) {
	s.mu.Lock()
	s.stopping = true
	var clients, servers []*Process
	for _, p := range s.procs {
		if p.Component.Kind == KindAPIServer || p.Component.Kind == KindLightMembers {
			servers = append(servers, p)
		} else {
			clients = append(clients, p)
		}
	}
	s.mu.Unlock()
	stopAll(clients, grace)
	stopAll(servers, grace)
}

func stopAll(procs []*Process, grace time.Duration) {
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-p.done:
				return
			default:
			}
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(grace):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}()
	}
	wg.Wait()
}

// LogTail returns the last n lines of a log file, for error reports.
func LogTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log at %s: %v)", path, err)
	}
	defer f.Close()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		_, _ = f.Seek(st.Size()-maxRead, io.SeekStart)
	}
	data, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(data, nil)), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
