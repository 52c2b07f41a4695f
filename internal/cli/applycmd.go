package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/dynamic"
	"k8s.io/kubectl/pkg/cmd/apply"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// applyFieldManager owns the policies `flotilla apply` writes.
const applyFieldManager = "flotilla-apply"

// newApplyCommand is karmadactl apply: kubectl apply on the control plane,
// then, with --all-clusters or -C, a PropagationPolicy (a
// ClusterPropagationPolicy for a cluster-scoped object) per applied object,
// named <name>-<kind>, that places it on those clusters.
func newApplyCommand() *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	flags.ClusterName = nil
	f := cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(flags))
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	applyFlags := apply.NewApplyFlags(streams)
	var allClusters bool
	var clusters []string
	cmd := &cobra.Command{
		Use:   "apply (-f FILENAME | -k DIRECTORY) [--all-clusters | -C CLUSTER,...]",
		Short: "Apply manifests to the control plane and propagate them (karmadactl apply)",
		Long: `Apply a configuration to the control plane by file name or stdin, as kubectl
apply does (every kubectl apply flag works), and, with --all-clusters or
-C/--cluster, propagate what it applied: one PropagationPolicy per namespaced
object (a ClusterPropagationPolicy per cluster-scoped one), named
<name>-<kind>, selecting that object and placing it on every cluster or on the
named ones. Karmada's own kinds (policies, ...) are applied but not propagated,
and a Namespace gets no policy: the control plane propagates namespaces to
every member by itself. Clusters named with -C must be joined: nothing is
applied otherwise.
Without either flag it is kubectl apply.`,
		Example: `  # A Deployment on every member cluster
  flotilla apply -f web.yaml --all-clusters

  # On two of them
  flotilla apply -f web.yaml -C member1,member2`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if allClusters && len(clusters) > 0 {
				return usageError{fmt.Errorf("--all-clusters and -C/--cluster cannot be used together")}
			}
			defaultToLocalStack(flags)
			kubectlWarnings()
			if len(clusters) > 0 {
				if err := clustersJoined(cmd.Context(), flags, clusters); err != nil {
					return err
				}
			}
			o, err := applyFlags.ToOptions(f, cmd, "flotilla", args)
			if err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.Run(); err != nil {
				return err
			}
			if (!allClusters && len(clusters) == 0) || o.DryRunStrategy != cmdutil.DryRunNone {
				return nil
			}
			infos, err := o.GetObjects()
			if err != nil {
				return err
			}
			c, err := controlPlaneDynamic(flags)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			return propagateApplied(ctx, c, infos, clusters, cmd.OutOrStdout())
		},
	}
	applyFlags.AddFlags(cmd)
	flags.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&allClusters, "all-clusters", false, "propagate what is applied to every member cluster")
	cmd.Flags().StringSliceVarP(&clusters, "cluster", "C", nil, "propagate what is applied to these member clusters (comma-separated)")
	return cmd
}

// clustersJoined returns an error listing the joined clusters when one of
// names is not a Cluster of the control plane.
func clustersJoined(ctx context.Context, flags *genericclioptions.ConfigFlags, names []string) error {
	list, err := listControlPlane(ctx, flags, clusterv1alpha1.SchemeGroupVersion.WithResource("clusters"))
	if err != nil {
		return fmt.Errorf("list the control plane's Clusters: %w", err)
	}
	joined := sets.New[string]()
	for _, cl := range list.Items {
		joined.Insert(cl.GetName())
	}
	if missing := sets.List(sets.New(names...).Difference(joined)); len(missing) > 0 {
		return notJoined(missing, sets.List(joined))
	}
	return nil
}

// writePolicy creates policy, or replaces the resource selectors and the
// whole placement of the existing one (from -C to --all-clusters the
// cluster names must go, which a server-side apply of an empty placement
// cannot say).
func writePolicy(ctx context.Context, r dynamic.ResourceInterface, policy *unstructured.Unstructured) error {
	existing, err := r.Get(ctx, policy.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = r.Create(ctx, policy, metav1.CreateOptions{FieldManager: applyFieldManager})
		return err
	}
	if err != nil {
		return err
	}
	spec, _, _ := unstructured.NestedMap(policy.Object, "spec")
	for _, f := range []string{"resourceSelectors", "placement"} {
		if err := unstructured.SetNestedField(existing.Object, spec[f], "spec", f); err != nil {
			return err
		}
	}
	_, err = r.Update(ctx, existing, metav1.UpdateOptions{FieldManager: applyFieldManager})
	return err
}

// controlPlaneDynamic is a dynamic client of the control plane flags name.
func controlPlaneDynamic(flags *genericclioptions.ConfigFlags) (dynamic.Interface, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

// listControlPlane lists gvr on the control plane flags name, in at most
// 30 s. ctx may be nil.
func listControlPlane(ctx context.Context, flags *genericclioptions.ConfigFlags, gvr schema.GroupVersionResource) (*unstructured.UnstructuredList, error) {
	c, err := controlPlaneDynamic(flags)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.Resource(gvr).List(ctx, metav1.ListOptions{})
}

// propagateApplied server-side applies a policy per applied object.
func propagateApplied(ctx context.Context, c dynamic.Interface, infos []*resource.Info, clusters []string, out io.Writer) error {
	placement := map[string]any{}
	if len(clusters) > 0 {
		names := make([]any, 0, len(clusters))
		for _, n := range clusters {
			names = append(names, n)
		}
		placement["clusterAffinity"] = map[string]any{"clusterNames": names}
	}
	for _, info := range infos {
		gvk := info.Object.GetObjectKind().GroupVersionKind()
		// Karmada's own kinds are not propagated; namespaces are, by the
		// namespace controller, to every cluster, with no policy.
		if strings.HasSuffix(gvk.Group, "karmada.io") || (gvk.Group == "" && gvk.Kind == "Namespace") {
			continue
		}
		obj, err := meta.Accessor(info.Object)
		if err != nil {
			return err
		}
		selector := map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "name": obj.GetName()}
		md := map[string]any{"name": obj.GetName() + "-" + strings.ToLower(gvk.Kind)}
		kind := "ClusterPropagationPolicy"
		if info.Namespaced() {
			kind = "PropagationPolicy"
			selector["namespace"] = obj.GetNamespace()
			md["namespace"] = obj.GetNamespace()
		}
		policy := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": policyv1alpha1.SchemeGroupVersion.String(), "kind": kind, "metadata": md,
			"spec": map[string]any{"resourceSelectors": []any{selector}, "placement": placement},
		}}
		var r dynamic.ResourceInterface = c.Resource(policyv1alpha1.SchemeGroupVersion.WithResource("clusterpropagationpolicies"))
		if info.Namespaced() {
			r = c.Resource(policyv1alpha1.SchemeGroupVersion.WithResource("propagationpolicies")).Namespace(obj.GetNamespace())
		}
		if err := writePolicy(ctx, r, policy); err != nil {
			return fmt.Errorf("propagate %s %s: %w", strings.ToLower(gvk.Kind), obj.GetName(), err)
		}
		fmt.Fprintf(out, "%s.policy.karmada.io/%s applied\n", strings.ToLower(kind), md["name"])
	}
	return nil
}
