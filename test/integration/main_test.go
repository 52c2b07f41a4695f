// Package integration tests Flotilla's controllers against real API servers:
// the tier between unit tests and end-to-end tests.
//
// TestMain starts one local stack for the whole package with `flotilla up
// --members 2 --bare-members`: the control plane's embedded
// kube-apiserver (with its FlotillaPolicyClaim admission plugin) and two
// member API servers, member1 and member2, joined in push mode. The stack's
// own controller manager runs only the cluster controller (Cluster status
// and execution namespaces, which `up` waits for); every other controller
// runs in this test process, through controllermanager.Run, once with every
// fast path on and once with all of them off (see TestControllers), so a
// test can read, from the same process, what the level-based core converges
// to on its own.
//
// The binary comes from $FLOTILLA_BIN (make test builds it once for every
// package); without it TestMain builds one. With -short nothing starts and
// every test is skipped. A failed run (any run with INTEGRATION_KEEP set)
// keeps its data dir, with every component's log and the in-process
// controllers' logs, and prints where.
package integration

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/localstack"
)

// memberNames are the member clusters of the stack, as `up` names them.
var memberNames = []string{"member1", "member2"}

// theStack is the stack TestMain started; nil with -short.
var theStack *stack

// stack is the running local stack and clients to each of its API servers.
type stack struct {
	// dataDir is the stack's --data-dir.
	dataDir string
	// controlPlaneConfig reaches the control plane (context karmada-apiserver).
	controlPlaneConfig *rest.Config
	// controlPlane is a client of the control plane with every Karmada type.
	controlPlane client.Client
	// members are clients of member1 and member2 with the built-in types.
	members map[string]client.Client
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(runWithStack(m))
}

// runWithStack starts the stack, runs the tests and stops the stack; it
// returns the exit code.
func runWithStack(m *testing.M) int {
	dir, err := os.MkdirTemp("", "flotilla-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	bin := os.Getenv("FLOTILLA_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "flotilla")
		fmt.Fprintln(os.Stderr, "integration: FLOTILLA_BIN not set; building it with make (set it to skip this)")
		build := exec.Command("make", "-C", "../..", "build", "BIN="+bin)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "integration: build failed:", err)
			os.RemoveAll(dir)
			return 1
		}
	}
	code := 1
	s, stop, err := startStack(bin, dir)
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "integration:", err)
			code = 1
		}
		if code != 0 || os.Getenv("INTEGRATION_KEEP") != "" {
			fmt.Fprintf(os.Stderr, "integration: kept %s; component logs and the in-process controllers' logs are in %s\n",
				dir, filepath.Join(dir, "stack", "logs"))
			return
		}
		os.RemoveAll(dir)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return code
	}
	theStack = s
	if err := quietKlog(); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return code
	}
	code = m.Run()
	return code
}

// upTimeout bounds the start of the stack.
const upTimeout = 3 * time.Minute

// startStack runs `flotilla up` in the foreground, as a child of this
// process, with its data in <dir>/stack and its output in <dir>/up.log, and
// connects to every API server once it is ready. The stack's controller
// manager runs the cluster controller only: `up` waits for every Cluster to
// be Ready, which that controller reports, and the tests run all the others
// themselves.
//
// The child gets SIGTERM, and so stops the stack, when this process ends
// however it ends (a panic, go test's -timeout): a detached stack would
// outlive a test binary that never reached its cleanup. The calling thread
// is locked because the parent-death signal follows the thread that
// started the child. stop stops the stack; it is never nil.
func startStack(bin, dir string) (*stack, func() error, error) {
	runtime.LockOSThread()
	dataDir := filepath.Join(dir, "stack")
	logPath := filepath.Join(dir, "up.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, func() error { return nil }, err
	}
	up := exec.Command(bin, "up", "--members", fmt.Sprint(len(memberNames)), "--bare-members",
		"--data-dir", dataDir, "--timeout", upTimeout.String(), "--controller-manager-arg=--controllers=cluster")
	up.Stdout, up.Stderr = logFile, logFile
	up.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := up.Start(); err != nil {
		logFile.Close()
		return nil, func() error { return nil }, fmt.Errorf("start flotilla up: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- up.Wait() }()
	stop := func() error {
		defer logFile.Close()
		_ = up.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				return fmt.Errorf("flotilla up did not stop cleanly: %w (see %s)", err, logPath)
			}
			return nil
		case <-time.After(time.Minute):
			// Its children die with it (parent-death signal).
			_ = up.Process.Kill()
			<-exited
			return fmt.Errorf("flotilla up did not stop within a minute and was killed (see %s)", logPath)
		}
	}
	deadline := time.After(upTimeout + 10*time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if st, _ := localstack.ReadState(dataDir); st.PID == up.Process.Pid && st.Phase == localstack.PhaseReady {
			break
		}
		select {
		case err := <-exited:
			exited <- err // for stop
			out, _ := os.ReadFile(logPath)
			return nil, stop, fmt.Errorf("flotilla up stopped before the stack was ready (%w):\n%s", err, out)
		case <-deadline:
			return nil, stop, fmt.Errorf("the stack was not ready within %s; see %s", upTimeout, logPath)
		case <-tick.C:
		}
	}
	s, err := connect(dataDir)
	return s, stop, err
}

// connect builds clients of every API server of the stack in dataDir.
func connect(dataDir string) (*stack, error) {
	s := &stack{dataDir: dataDir, members: map[string]client.Client{}}
	cfg, err := localstack.RESTConfig(filepath.Join(dataDir, "karmada.config"), localstack.ControlPlaneContext)
	if err != nil {
		return nil, err
	}
	s.controlPlaneConfig = cfg
	if s.controlPlane, err = client.New(cfg, client.Options{Scheme: controlplane.NewScheme()}); err != nil {
		return nil, fmt.Errorf("control-plane client: %w", err)
	}
	for _, name := range memberNames {
		mcfg, err := localstack.RESTConfig(filepath.Join(dataDir, "members.config"), name)
		if err != nil {
			return nil, err
		}
		if s.members[name], err = client.New(mcfg, client.Options{Scheme: scheme.Scheme}); err != nil {
			return nil, fmt.Errorf("%s client: %w", name, err)
		}
	}
	return s, nil
}

// quietKlog sends klog, which the in-process controllers log to, to files
// only (see logControllersTo): test output stays readable, and a failure
// points at the log.
func quietKlog() error {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL",
		"one_output": "true", "v": "2"} {
		if err := fs.Set(k, v); err != nil {
			return fmt.Errorf("set klog flag %s: %w", k, err)
		}
	}
	klog.SetOutput(io.Discard)
	return nil
}
