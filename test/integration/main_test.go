// Package integration tests Flotilla's controllers against real API servers:
// the tier between unit tests and end-to-end tests.
//
// TestMain starts one local stack for the whole package with `flotilla up
// --members 2 --bare-members --detach`: the control plane's embedded
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
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	dataDir := filepath.Join(dir, "stack")
	code := 1
	defer func() {
		if out, err := flotilla(bin, "down", "--data-dir", dataDir); err != nil {
			fmt.Fprintf(os.Stderr, "integration: flotilla down: %v\n%s", err, out)
			code = 1
		}
		if code != 0 || os.Getenv("INTEGRATION_KEEP") != "" {
			fmt.Fprintf(os.Stderr, "integration: kept %s; component logs and the in-process controllers' logs are in %s\n",
				dir, filepath.Join(dataDir, "logs"))
			return
		}
		os.RemoveAll(dir)
	}()
	s, err := startStack(bin, dataDir)
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

// startStack runs `flotilla up` in the background and connects to every
// API server. The stack's controller manager runs the cluster controller
// only: `up` waits for every Cluster to be Ready, which that controller
// reports, and the tests run all the others themselves.
func startStack(bin, dataDir string) (*stack, error) {
	out, err := flotilla(bin, "up", "--members", fmt.Sprint(len(memberNames)), "--bare-members", "--detach",
		"--data-dir", dataDir, "--timeout", "3m", "--controller-manager-arg=--controllers=cluster")
	if err != nil || !strings.Contains(out, "Flotilla is ready") {
		return nil, fmt.Errorf("flotilla up: %v\n%s", err, out)
	}
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

// flotilla runs the binary with a deadline and returns its combined output.
func flotilla(bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
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
