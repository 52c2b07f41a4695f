package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/kubectl/pkg/cmd/attach"
	kubectldescribe "k8s.io/kubectl/pkg/cmd/describe"
	"k8s.io/kubectl/pkg/cmd/exec"
	"k8s.io/kubectl/pkg/cmd/logs"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/member/proxy"
)

// fleetProxyPath is karmada-search's proxy on the control plane (flotilla
// search): it sends a request on an object to the member that holds it.
const fleetProxyPath = "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"

// memberGetter is kubectl's RESTClientGetter aimed at a member: with
// --cluster, the Cluster proxy of that cluster; without, the fleet proxy,
// which finds the member from the search cache.
type memberGetter struct {
	*genericclioptions.ConfigFlags
	cluster *string

	once sync.Once // kubectl asks for the config several times: resolve once
	cfg  *rest.Config
	err  error
}

// ToRESTConfig is the control plane's config with its server moved to the
// proxy. Errors: the kubeconfig, or a --cluster that is not joined (the
// message lists the joined ones).
func (g *memberGetter) ToRESTConfig() (*rest.Config, error) {
	g.once.Do(func() { g.cfg, g.err = g.resolve() })
	if g.err != nil {
		return nil, g.err
	}
	return rest.CopyConfig(g.cfg), nil
}

func (g *memberGetter) resolve() (*rest.Config, error) {
	cfg, err := g.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	host := strings.TrimSuffix(cfg.Host, "/")
	if *g.cluster == "" {
		cfg.Host = host + fleetProxyPath
		return cfg, nil
	}
	c, err := client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
	if err != nil {
		return nil, err
	}
	list := &clusterv1alpha1.ClusterList{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list the control plane's Clusters: %w", err)
	}
	var joined []string
	for _, cl := range list.Items {
		if cl.Name == *g.cluster {
			cfg.Host = host + proxy.Prefix + cl.Name + "/proxy"
			return cfg, nil
		}
		joined = append(joined, cl.Name)
	}
	return nil, notJoined([]string{*g.cluster}, joined)
}

func (g *memberGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	cfg, err := g.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return memory.NewMemCacheClient(d), nil
}

func (g *memberGetter) ToRESTMapper() (meta.RESTMapper, error) {
	d, err := g.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	return restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(d), d, nil), nil
}

// memberKubectl wraps one of kubectl's commands so that it runs against a
// member cluster (karmadactl's logs, exec, attach and describe): -C/--cluster
// names it, through the Cluster proxy; without it the fleet proxy finds the
// member holding the object from flotilla search's cache (a ResourceRegistry
// must cache the kind). The control plane comes from --kubeconfig and
// --context, as for kubectl.
//
// needsPods says the command works on a pod (logs, exec, attach): without -C
// it checks first that flotilla search caches pods, so that a missing
// ResourceRegistry is reported at once rather than as kubectl's wait for a
// pod that never comes.
func memberKubectl(build func(cmdutil.Factory, genericiooptions.IOStreams) *cobra.Command, needsPods bool, example string) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	// kubectl's --cluster (a kubeconfig cluster) would clash with ours.
	flags.ClusterName = nil
	var cluster string
	getter := &memberGetter{ConfigFlags: flags, cluster: &cluster}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := build(cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(getter)), streams)
	cmd.Long = strings.TrimSpace(cmd.Short) + ` in a member cluster, as kubectl does in one cluster (karmadactl's ` + cmd.Name() + `).

-C/--cluster names the member; the request goes through its Cluster proxy on the
control plane, as you (the member's RBAC decides, through unified
authentication). Without -C, the request goes through flotilla search's proxy,
which sends it to the member whose cache holds the object: a ResourceRegistry
must cache its kind (and, for a workload, its pods).`
	cmd.Example = example
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		defaultToLocalStack(flags)
		kubectlWarnings()
		if strings.Contains(cluster, ",") {
			return usageError{fmt.Errorf("-C/--cluster names one member cluster, not a list (%q)", cluster)}
		}
		if cluster != "" || !needsPods {
			return nil
		}
		return podsCached(cmd.Context(), flags, cmd.Name())
	}
	cmd.Flags().StringVarP(&cluster, "cluster", "C", "", "the member cluster; without it, the member holding the object, from flotilla search's cache")
	flags.AddFlags(cmd.Flags())
	return cmd
}

// podsCached checks that a ResourceRegistry caches pods in the command's
// namespace. Errors: flotilla search is not installed, or no registry
// caches them; the message says what to do.
func podsCached(ctx context.Context, flags *genericclioptions.ConfigFlags, command string) error {
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	regs, err := listControlPlane(ctx, flags, searchv1alpha1.SchemeGroupVersion.WithResource(searchv1alpha1.ResourcePluralResourceRegistry))
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return fmt.Errorf("without -C, flotilla %s finds the pod through flotilla search, which this control plane does not serve: name the member cluster with -C", command)
	}
	if err != nil {
		return fmt.Errorf("list ResourceRegistries: %w", err)
	}
	for _, r := range regs.Items {
		sels, _, _ := unstructured.NestedSlice(r.Object, "spec", "resourceSelectors")
		for _, s := range sels {
			m, _ := s.(map[string]any)
			if m["apiVersion"] == "v1" && m["kind"] == "Pod" && (m["namespace"] == nil || m["namespace"] == "" || m["namespace"] == ns) {
				return nil
			}
		}
	}
	return fmt.Errorf("without -C, flotilla %s finds the pod through flotilla search's cache, and no ResourceRegistry caches pods in namespace %s.\n"+
		"Name the member cluster with -C, or cache them: a ResourceRegistry with the resourceSelector {apiVersion: v1, kind: Pod, namespace: %s}", command, ns, ns)
}

func newLogsCommand() *cobra.Command {
	return memberKubectl(func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command { return logs.NewCmdLogs(f, s) }, true,
		`  # The logs of a pod in member1
  flotilla logs -C member1 web-7d4f9 -n shop

  # Of a Deployment's pod, wherever it runs (flotilla search caches Deployments and Pods)
  flotilla logs deploy/web -n shop`)
}

func newExecCommand() *cobra.Command {
	return memberKubectl(func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command { return exec.NewCmdExec(f, s) }, true,
		`  flotilla exec -C member1 web-7d4f9 -n shop -- date
  flotilla exec -it deploy/web -n shop -- sh`)
}

func newAttachCommand() *cobra.Command {
	return memberKubectl(func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command { return attach.NewCmdAttach(f, s) }, true,
		`  flotilla attach -C member1 web-7d4f9 -n shop`)
}

func newDescribeCommand() *cobra.Command {
	return memberKubectl(func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
		return kubectldescribe.NewCmdDescribe("flotilla", f, s)
	}, false, `  flotilla describe -C member1 deployment web -n shop
  flotilla describe pod web-7d4f9 -n shop`)
}
