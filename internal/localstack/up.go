package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Step is work `up` does once every cluster is ready, such as installing the
// Karmada CRDs or registering the members. Steps run in order; each must be
// idempotent because `up` runs them again on every start.
type Step struct {
	// Name is shown in the progress line, e.g. "Karmada CRDs installed";
	// empty for steps that print their own.
	Name string
	Run  func(ctx context.Context, s *Stack) error
}

// UpOptions configures Up.
type UpOptions struct {
	Config *Config
	// Exe is the flotilla binary the children run; normally os.Executable().
	Exe string
	// Out receives progress lines.
	Out io.Writer
	// Timeout bounds the whole start-up.
	Timeout time.Duration
	// Steps run after every cluster is ready.
	Steps []Step
}

// Stack is a running local stack.
type Stack struct {
	Plan       *Plan
	Supervisor *Supervisor
	out        io.Writer
	started    time.Time

	mu sync.Mutex
	// healthClients holds, by component name, the client that first
	// found the component healthy; a restart checks it with the same one.
	healthClients map[string]*http.Client
}

// ComponentError reports a component that failed to start, with the tail of
// its log so the user sees why without opening files.
type ComponentError struct {
	Component Component
	Err       error
}

func (e *ComponentError) Error() string {
	return fmt.Sprintf("%s failed: %v\n--- last lines of %s ---\n%s\n--- end of log ---",
		e.Component.Name, e.Err, e.Component.LogFile, LogTail(e.Component.LogFile, 25))
}

func (e *ComponentError) Unwrap() error { return e.Err }

// Up prepares the data dir (PKI, ports, kubeconfigs, kwok stages), starts
// every component, and returns once every API server is ready, every member
// node is Ready and every step has run. It prints one line per component as
// it becomes ready. On failure it stops what it started and returns a
// *ComponentError naming the component, or another error for set-up problems.
func Up(ctx context.Context, o UpOptions) (*Stack, error) {
	start := time.Now()
	cfg := o.Config
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "logs"), 0o700); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w", cfg.DataDir, err)
	}
	ports, err := LoadRecordedPorts(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	plan, err := BuildPlan(cfg, ports)
	if err != nil {
		return nil, err
	}
	if err := ports.Save(); err != nil {
		return nil, fmt.Errorf("record ports: %w", err)
	}
	names := make([]string, 0, len(plan.Clusters))
	for _, c := range plan.Clusters {
		names = append(names, c.Name)
	}
	if _, err := EnsurePKI(cfg.DataDir, names); err != nil {
		return nil, fmt.Errorf("prepare certificates: %w", err)
	}
	if err := WriteKubeconfigs(plan); err != nil {
		return nil, err
	}
	if err := writeKwokConfig(plan.KwokConfig, plan.DataDir); err != nil {
		return nil, err
	}

	s := &Stack{Plan: plan, Supervisor: NewSupervisor(o.Exe), out: o.Out, started: start}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s.progress("starting control plane and %d member clusters (logs in %s)", len(plan.Members()), plan.LogDir())

	if plan.LightMembers.Kind != "" {
		// Started, not awaited: each light member's start is awaited
		// by its own startCluster.
		if _, err := s.Supervisor.Start(plan.LightMembers); err != nil {
			return nil, &ComponentError{Component: plan.LightMembers, Err: err}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(plan.Clusters))
	for _, c := range plan.Clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.startCluster(ctx, c); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := firstError(errs); err != nil {
		s.Stop()
		return nil, err
	}
	for _, step := range o.Steps {
		if err := step.Run(ctx, s); err != nil {
			s.Stop()
			return nil, fmt.Errorf("%s: %w", step.Name, err)
		}
		if step.Name != "" {
			s.progress("%s", step.Name)
		}
	}
	return s, nil
}

func firstError(errs <-chan error) error {
	var first error
	for err := range errs {
		// A cancelled sibling reports a context error; prefer the cause.
		if first == nil || (isContextErr(first) && !isContextErr(err)) {
			first = err
		}
	}
	return first
}

func isContextErr(err error) bool {
	return strings.Contains(err.Error(), context.Canceled.Error()) || strings.Contains(err.Error(), context.DeadlineExceeded.Error())
}

// startCluster brings up one cluster: API server first, then the components
// that need it, then (for members) the simulated nodes.
func (s *Stack) startCluster(ctx context.Context, c *ClusterPlan) error {
	restCfg, err := RESTConfig(c.Kubeconfig, "")
	if err != nil {
		return err
	}
	httpClient, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		return err
	}
	if c.Light() {
		host := s.Plan.LightMembers
		s.setHealthClient(host.Name, httpClient)
		if err := s.poll(ctx, host, func() (bool, string) { return checkHealth(ctx, httpClient, c.Server()+"/readyz") }); err != nil {
			return err
		}
		s.progress("%s/%s ready (in %s)", c.Name, KindAPIServer, host.Name)
		return nil
	}
	api := c.Components[0]
	if err := s.startAndWait(ctx, httpClient, api); err != nil {
		return err
	}
	simulated := c.Member != nil && !c.Member.Bare
	var wg sync.WaitGroup
	errs := make(chan error, len(c.Components))
	for _, comp := range c.Components[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if comp.Kind == KindKwok {
				// kwok watches these from its start (--enable-crds); the
				// other components need not wait for them.
				if err := InstallKwokMetrics(ctx, restCfg); err != nil {
					errs <- fmt.Errorf("%s: %w", c.Name, err)
					return
				}
			}
			if err := s.startAndWait(ctx, httpClient, comp); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := firstError(errs); err != nil {
		return err
	}
	if !simulated {
		return nil
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	if err := EnsureNodes(ctx, cs, c.Member, c.KwokPort); err != nil {
		return err
	}
	var kwok Component
	for _, comp := range c.Components {
		if comp.Kind == KindKwok {
			kwok = comp
		}
	}
	err = s.poll(ctx, kwok, func() (bool, string) {
		ready, total, err := ReadyNodes(ctx, cs)
		if err != nil {
			return false, err.Error()
		}
		return ready == c.Member.Nodes && total == c.Member.Nodes, fmt.Sprintf("%d of %d nodes Ready", ready, c.Member.Nodes)
	})
	if err != nil {
		return err
	}
	s.progress("%s: %d nodes Ready", c.Name, c.Member.Nodes)
	if err := RegisterAggregatedAPIs(ctx, restCfg, c); err != nil {
		return fmt.Errorf("%s: register the metrics APIs: %w (see %s)", c.Name, err, filepath.Join(s.Plan.LogDir(), c.Name+"-"+KindMetrics+".log"))
	}
	s.progress("%s: metrics.k8s.io, custom.metrics.k8s.io and external.metrics.k8s.io Available", c.Name)
	return nil
}

// StartComponent starts a component that is not part of any cluster's
// start-up (the Flotilla controller manager) and waits until it is healthy.
func (s *Stack) StartComponent(ctx context.Context, comp Component) error {
	cfg, err := RESTConfig(s.Plan.KarmadaKubeconfig(), ControlPlaneContext)
	if err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	return s.startAndWait(ctx, hc, comp)
}

// startAndWait starts comp and waits for its health endpoint (if any).
func (s *Stack) startAndWait(ctx context.Context, hc *http.Client, comp Component) error {
	if _, err := s.Supervisor.Start(comp); err != nil {
		return &ComponentError{Component: comp, Err: err}
	}
	if comp.HealthURL == "" {
		return nil
	}
	s.setHealthClient(comp.Name, hc)
	err := s.poll(ctx, comp, func() (bool, string) { return checkHealth(ctx, hc, comp.HealthURL) })
	if err != nil {
		return err
	}
	s.progress("%s ready", comp.Name)
	return nil
}

// setHealthClient records the client that checks component name's health
// when it restarts.
func (s *Stack) setHealthClient(name string, hc *http.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.healthClients == nil {
		s.healthClients = map[string]*http.Client{}
	}
	s.healthClients[name] = hc
}

// checkHealth asks a health endpoint once: ok on 200, otherwise a status
// line that says what it answered.
func checkHealth(ctx context.Context, hc *http.Client, url string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, err.Error()
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, fmt.Sprintf("%s answered %d: %s", url, resp.StatusCode, lastLine(string(body)))
}

// poll calls check every 200ms until it succeeds, the context ends, or the
// component's process exits; the last status from check explains a timeout.
func (s *Stack) poll(ctx context.Context, comp Component, check func() (bool, string)) error {
	var proc *Process
	for _, p := range s.Supervisor.Processes() {
		if p.Component.Name == comp.Name {
			proc = p
		}
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		ok, status := check()
		if ok {
			return nil
		}
		last = status
		select {
		case <-proc.Done():
			return &ComponentError{Component: comp, Err: fmt.Errorf("process exited: %w", proc.Err())}
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return &ComponentError{Component: comp, Err: fmt.Errorf("not ready before the start-up timeout; last check: %s", last)}
			}
			return fmt.Errorf("%s: %w", comp.Name, ctx.Err())
		case <-tick.C:
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Progress prints a progress line with the seconds elapsed since Up began.
func (s *Stack) Progress(format string, args ...any) { s.progress(format, args...) }

func (s *Stack) progress(format string, args ...any) {
	fmt.Fprintf(s.out, "[%6.1fs] %s\n", time.Since(s.started).Seconds(), fmt.Sprintf(format, args...))
}

// Elapsed is the time since Up began.
func (s *Stack) Elapsed() time.Duration { return time.Since(s.started) }

// Stop stops every component (controllers first, API servers last).
func (s *Stack) Stop() { s.Supervisor.Stop(20 * time.Second) }

// Supervise blocks until ctx ends. A component that exits meanwhile is
// reported and restarted after newRestartBackoff's delay, so a crashed
// controller does not leave the stack half-alive; once the restarted process
// answers its health endpoint, a line says it is ready again (a component
// without one, kwok, is announced as running again).
func (s *Stack) Supervise(ctx context.Context) {
	type exit struct{ p *Process }
	exits := make(chan exit)
	watch := func(p *Process) {
		go func() {
			select {
			case <-p.Done():
				exits <- exit{p}
			case <-ctx.Done():
			}
		}()
	}
	for _, p := range s.Supervisor.Processes() {
		watch(p)
	}
	restarts := newRestartBackoff()
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-exits:
			if s.Supervisor.Stopping() {
				continue
			}
			name := e.p.Component.Name
			restarts.Next(name, time.Now())
			d := restarts.Get(name)
			fmt.Fprintf(s.out, "%s exited (%v); restarting in %s. Log: %s\n", name, e.p.Err(), d, e.p.Component.LogFile)
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			p, err := s.Supervisor.Start(e.p.Component)
			if err != nil {
				fmt.Fprintf(s.out, "cannot restart %s: %v\n", name, err)
				continue
			}
			watch(p)
			go s.announceReady(ctx, p)
		}
	}
}

// newRestartBackoff is the per-component restart back-off of Supervise
// (client-go's, as kubelet uses for crashing containers): 1 s for a first
// exit, doubling with each exit after it up to 30 s, and 1 s again once a
// component's previous exit is more than twice that maximum (60 s) ago.
func newRestartBackoff() *flowcontrol.Backoff {
	return flowcontrol.NewBackOff(time.Second, 30*time.Second)
}

// announceReady prints that a restarted process is ready again once its
// health endpoint answers 200. It gives up silently if the process exits
// first (Supervise reports that exit) or ctx ends.
func (s *Stack) announceReady(ctx context.Context, p *Process) {
	comp := p.Component
	s.mu.Lock()
	hc := s.healthClients[comp.Name]
	s.mu.Unlock()
	if comp.HealthURL == "" || hc == nil {
		fmt.Fprintf(s.out, "%s is running again (it has no health endpoint to check)\n", comp.Name)
		return
	}
	restarted := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if ok, _ := checkHealth(ctx, hc, comp.HealthURL); ok {
			fmt.Fprintf(s.out, "%s is ready again (%.1fs after its restart)\n", comp.Name, time.Since(restarted).Seconds())
			return
		}
		select {
		case <-p.Done():
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
