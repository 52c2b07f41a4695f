// Package component runs the Kubernetes components of the local stack, one per
// process: kube-apiserver on embedded etcd, kube-controller-manager,
// kube-scheduler and kwok. `flotilla up` starts each of them as a hidden
// subcommand of the flotilla binary itself, so one artifact carries the whole
// stack.
package component

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/component-base/cli"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// EtcdOptions describes the embedded etcd that backs one kube-apiserver.
type EtcdOptions struct {
	// Name is the etcd member name, e.g. "member1".
	Name string
	// DataDir holds the etcd WAL and snapshots. It survives restarts.
	DataDir string
	// ClientPort and PeerPort are TCP ports on 127.0.0.1.
	ClientPort, PeerPort int
	// LogFile receives etcd's own log (zap, JSON lines).
	LogFile string
}

// StartEtcd starts a single-member etcd on loopback and waits until it serves.
// It returns the running server; callers close it after the API server stops.
// Errors: the data dir cannot be used, a port is taken, or etcd is not ready
// within two minutes.
func StartEtcd(o EtcdOptions) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = o.Name
	cfg.Dir = o.DataDir
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", o.ClientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", o.PeerPort)}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", o.Name, peer.String())
	cfg.Logger = "zap"
	cfg.LogLevel = "warn"
	if o.LogFile != "" {
		cfg.LogOutputs = []string{o.LogFile}
	}
	// 8 GiB, etcd's recommended maximum: a local stack should never hit the
	// default 2 GiB quota and turn read-only.
	cfg.QuotaBackendBytes = 8 << 30
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start etcd in %s: %w", o.DataDir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd failed while starting: %w", err)
	case <-time.After(2 * time.Minute):
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("etcd in %s was not ready after 2m", o.DataDir)
	}
}

// APIServerGCPercent is the Go GC target (GOGC) of every kube-apiserver
// process of the local stack, unless GOGC is set in the environment.
const APIServerGCPercent = 300

// RunAPIServer starts etcd, then runs kube-apiserver (k8s.io/kubernetes as a
// library) with apiserverArgs until SIGTERM or SIGINT, then stops etcd.
// It returns the process exit code.
func RunAPIServer(etcd EtcdOptions, apiserverArgs []string) int {
	if os.Getenv("GOGC") == "" {
		// The API server and its etcd share one heap, so every
		// collection also scans etcd's index; under a propagation burst
		// the collector took a quarter of the control plane's CPU. A
		// larger heap target halves that, for a few tens of MiB.
		debug.SetGCPercent(APIServerGCPercent)
	}
	e, err := StartEtcd(etcd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	defer e.Close()
	// Watch for etcd dying underneath the API server: without its store the
	// API server is useless, so exit and let the supervisor report it.
	go func() {
		if err := <-e.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "error: etcd stopped:", err)
			os.Exit(1)
		}
	}()
	cmd := apiserverapp.NewAPIServerCommand()
	cmd.SetArgs(apiserverArgs)
	return cli.Run(cmd)
}

// signalContext returns a context cancelled by SIGTERM or SIGINT.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
}
