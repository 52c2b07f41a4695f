package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// newRebalanceCommand creates a WorkloadRebalancer (apps.karmada.io) for the
// named workloads, waits for its result and prints it per workload.
func newRebalanceCommand() *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	flags.ClusterName = nil
	var name string
	var timeout time.Duration
	var ttl int32
	cmd := &cobra.Command{
		Use:   "rebalance TYPE/NAME [TYPE/NAME...]",
		Short: "Reschedule workloads afresh with a WorkloadRebalancer and print each one's result",
		Long: `Create a WorkloadRebalancer (apps.karmada.io/v1alpha1) listing the named
workloads (templates on the control plane, in the namespace of -n), wait until
the workloadRebalancer controller has rescheduled each one afresh, and print
each workload's result: Successful, or Failed with a reason
(ReferencedBindingNotFound: no binding, so nothing propagates it). The
WorkloadRebalancer is deleted --ttl seconds after it finishes.`,
		Example: `  flotilla rebalance deployment/web deployment/api -n shop
  flotilla rebalance deploy/web -n shop --name web-after-maintenance --ttl 3600`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ttl < 0 {
				return usageError{fmt.Errorf("--ttl must not be negative")}
			}
			defaultToLocalStack(flags)
			kubectlWarnings()
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return err
			}
			mapper, err := flags.ToRESTMapper()
			if err != nil {
				return err
			}
			ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return err
			}
			rb := &appsv1alpha1.WorkloadRebalancer{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if rb.Name == "" {
				rb.Name = "rebalance-" + rand.String(5)
			}
			rb.Spec.TTLSecondsAfterFinished = &ttl
			for _, arg := range args {
				gvk, n, namespaced, err := resolveWorkload(mapper, arg)
				if err != nil {
					return err
				}
				ref := appsv1alpha1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: n}
				if namespaced {
					ref.Namespace = ns
				}
				rb.Spec.Workloads = append(rb.Spec.Workloads, ref)
			}
			c, err := client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			if err := c.Create(ctx, rb); err != nil {
				return fmt.Errorf("create WorkloadRebalancer %s: %w", rb.Name, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "workloadrebalancer.apps.karmada.io/%s created; waiting for its result\n", rb.Name)
			err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); apierrors.IsNotFound(err) {
					return false, fmt.Errorf("WorkloadRebalancer %s finished and was deleted (--ttl %d) before its result was read: give --ttl a few seconds at least", rb.Name, ttl)
				} else if err != nil {
					return false, err
				}
				return rb.Status.FinishTime != nil || (len(rb.Status.ObservedWorkloads) == len(rb.Spec.Workloads) && allResults(rb)), nil
			})
			if wait.Interrupted(err) {
				return fmt.Errorf("WorkloadRebalancer %s has no result after %s (is the controller manager running its workloadRebalancer controller?): %w", rb.Name, timeout, err)
			} else if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 3, ' ', 0)
			fmt.Fprintln(w, "WORKLOAD\tNAMESPACE\tRESULT\tREASON")
			failed := 0
			// In the order the workloads were named.
			order := func(o appsv1alpha1.ObservedWorkload) int {
				return slices.IndexFunc(rb.Spec.Workloads, func(w appsv1alpha1.ObjectReference) bool { return w == o.Workload })
			}
			slices.SortStableFunc(rb.Status.ObservedWorkloads, func(a, b appsv1alpha1.ObservedWorkload) int { return order(a) - order(b) })
			for _, o := range rb.Status.ObservedWorkloads {
				fmt.Fprintf(w, "%s/%s\t%s\t%s\t%s\n", strings.ToLower(o.Workload.Kind), o.Workload.Name, o.Workload.Namespace, o.Result, o.Reason)
				if o.Result == appsv1alpha1.RebalanceFailed {
					failed++
				}
			}
			_ = w.Flush()
			if failed > 0 {
				return fmt.Errorf("%d of %d workloads were not rebalanced (ReferencedBindingNotFound: the template does not exist in namespace %s, or no policy propagates it)", failed, len(rb.Status.ObservedWorkloads), ns)
			}
			return nil
		},
	}
	flags.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&name, "name", "", "the WorkloadRebalancer's name (default rebalance-<random>)")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the result")
	cmd.Flags().Int32Var(&ttl, "ttl", 300, "seconds the WorkloadRebalancer is kept after it finishes (spec.ttlSecondsAfterFinished)")
	return cmd
}

// resolveWorkload reads a TYPE/NAME argument ("deployment/web",
// "deploy/web", "configmaps/x") with the control plane's RESTMapper: the
// kind, the name, and whether the kind is namespaced. Errors say how to
// name a workload, or that the control plane serves no such type.
func resolveWorkload(mapper meta.RESTMapper, arg string) (schema.GroupVersionKind, string, bool, error) {
	typ, n, ok := strings.Cut(arg, "/")
	if !ok || typ == "" || n == "" {
		return schema.GroupVersionKind{}, "", false, usageError{fmt.Errorf("%q: name workloads as TYPE/NAME, for example deployment/web", arg)}
	}
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(typ).WithVersion(""))
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionKind{}, "", false, fmt.Errorf("%q: the control plane serves no resource type %q (kubectl api-resources lists them)", arg, typ)
	}
	if err != nil {
		return schema.GroupVersionKind{}, "", false, fmt.Errorf("%q: %w", arg, err)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return schema.GroupVersionKind{}, "", false, err
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return gvk, n, err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func allResults(rb *appsv1alpha1.WorkloadRebalancer) bool {
	for _, o := range rb.Status.ObservedWorkloads {
		if o.Result == "" {
			return false
		}
	}
	return true
}
