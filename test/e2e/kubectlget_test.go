package e2e

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/kubectl/pkg/cmd/get"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// inProcessGet runs `kubectl get args...` with kubectl's own command (the same flag parsing
// and printers as the binary) in this process, against one cluster of a stack. Tests poll
// with it, several times a second for minutes: a kubectl process costs about 0.2 CPU-seconds
// to start and read its discovery cache, which on two cores slowed every other lane. The
// cluster's discovery is kept in memory and dropped after any failed call, so a kind that
// has just been installed is found by the next poll. Actions a user takes still run the
// kubectl binary (stack.kubectl).
//
// The output is kubectl's standard output; ok is false when kubectl would have exited
// non-zero.
func inProcessGet(kubeconfig, context string, args ...string) (out string, ok bool) {
	c := kubectlClusterFor(kubeconfig, context)
	var stdout, stderr bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &stdout, ErrOut: &stderr}
	namespace := ""
	root := &cobra.Command{Use: "kubectl", SilenceErrors: true, SilenceUsage: true}
	root.PersistentFlags().StringVarP(&namespace, "namespace", "n", "", "")
	getter := &kubectlGetter{cluster: c, namespace: &namespace}
	root.AddCommand(get.NewCmdGet("kubectl", cmdutil.NewFactory(getter), streams))
	root.SetArgs(append([]string{"get"}, args...))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	ok = runFatalSafe(root.Execute)
	if !ok {
		c.forget()
	}
	return stdout.String(), ok
}

// kubectlFatal is what cmdutil's fatal handler panics with in this process, instead of
// exiting it.
type kubectlFatal struct{ code int }

var fatalOnce sync.Once

// runFatalSafe runs a kubectl command and reports whether it succeeded: an error returned,
// or a fatal error that kubectl would exit with, is a failure.
func runFatalSafe(run func() error) (ok bool) {
	fatalOnce.Do(func() { cmdutil.BehaviorOnFatal(func(_ string, code int) { panic(kubectlFatal{code}) }) })
	defer func() {
		if r := recover(); r != nil {
			if _, fatal := r.(kubectlFatal); !fatal {
				panic(r)
			}
			ok = false
		}
	}()
	return run() == nil
}

// kubectlCluster is what in-process kubectl calls against one cluster share: its REST config
// and discovery.
type kubectlCluster struct {
	kubeconfig, context string
	mu                  sync.Mutex
	config              *rest.Config
	discovery           discovery.CachedDiscoveryInterface
	mapper              *restmapper.DeferredDiscoveryRESTMapper
	expander            meta.RESTMapper // mapper with short names (rb, pp, deploy), as kubectl's
}

var (
	kubectlClustersMu sync.Mutex
	kubectlClusters   = map[[2]string]*kubectlCluster{}
)

func kubectlClusterFor(kubeconfig, context string) *kubectlCluster {
	kubectlClustersMu.Lock()
	defer kubectlClustersMu.Unlock()
	key := [2]string{kubeconfig, context}
	if c := kubectlClusters[key]; c != nil {
		return c
	}
	c := &kubectlCluster{kubeconfig: kubeconfig, context: context}
	kubectlClusters[key] = c
	return c
}

// loader reads the cluster's kubeconfig, with namespace ("" for the context's) as -n would.
func (c *kubectlCluster) loader(namespace string) clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: c.context, Context: clientcmdapi.Context{Namespace: namespace}})
}

// clients returns the REST config, discovery and mapper, made on first use.
func (c *kubectlCluster) clients() (*rest.Config, discovery.CachedDiscoveryInterface, meta.RESTMapper, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.config == nil {
		cfg, err := c.loader("").ClientConfig()
		if err != nil {
			return nil, nil, nil, err
		}
		cfg.QPS, cfg.Burst = 50, 100
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("discovery of %s: %w", c.context, err)
		}
		c.config = cfg
		c.discovery = memory.NewMemCacheClient(dc)
		c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(c.discovery)
		c.expander = restmapper.NewShortcutExpander(c.mapper, c.discovery, nil)
	}
	return rest.CopyConfig(c.config), c.discovery, c.expander, nil
}

// forget drops the discovery after a failed call: the kind may have been installed since.
func (c *kubectlCluster) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.discovery != nil {
		c.discovery.Invalidate()
		c.mapper.Reset()
	}
}

// kubectlGetter is the genericclioptions.RESTClientGetter of one in-process call.
type kubectlGetter struct {
	cluster   *kubectlCluster
	namespace *string // the call's -n, read once its flags are parsed
}

func (g *kubectlGetter) ToRESTConfig() (*rest.Config, error) {
	cfg, _, _, err := g.cluster.clients()
	return cfg, err
}

func (g *kubectlGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	_, dc, _, err := g.cluster.clients()
	return dc, err
}

func (g *kubectlGetter) ToRESTMapper() (meta.RESTMapper, error) {
	_, _, m, err := g.cluster.clients()
	return m, err
}

func (g *kubectlGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return g.cluster.loader(*g.namespace)
}
