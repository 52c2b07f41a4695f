package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// newRolloutCommand is `flotilla rollout`: the staged rollout of a
// template whose policy names a RolloutStrategy, read from and steered
// through its binding.
func newRolloutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND TYPE/NAME",
		Short: "Follow and steer the staged rollout of a template (RolloutStrategy)",
		Long: `A PropagationPolicy or ClusterPropagationPolicy with the annotation
rollout.flotilla.io/strategy stages every change to the templates it claims:
wave by wave, each cluster Healthy for minSuccessTime before the next goes.
These commands read that rollout from the template's ResourceBinding (or
ClusterResourceBinding) and steer it.`,
		Example: `  flotilla rollout status deployment/web
  flotilla rollout pause deployment/web -n shop
  flotilla rollout resume deployment/web -n shop
  flotilla rollout abort deployment/web
  flotilla rollout restart deployment/web`,
	}
	verbs := []struct {
		use, short, long string
		act              func(b binding.Object) (string, error)
	}{
		{"pause", "Admit no more clusters to the change", `Stop the rollout where it is: clusters already given the change keep it, the
others keep the previous rendering until ` + "`flotilla rollout resume`" + `.`,
			func(b binding.Object) (string, error) {
				setAnnotation(b, rolloutv1alpha1.PausedAnnotation, "true")
				return "paused", nil
			}},
		{"resume", "Go on after a pause or after clusters failed", `Undo a pause, and give the clusters that failed (not Healthy within
progressDeadline) a new deadline, so the rollout goes on.`,
			func(b binding.Object) (string, error) {
				setAnnotation(b, rolloutv1alpha1.PausedAnnotation, "")
				setAnnotation(b, rolloutv1alpha1.ResumeAnnotation, time.Now().UTC().Format(time.RFC3339Nano))
				return "resumed", nil
			}},
		{"abort", "Take the clusters that have the change back to the previous rendering", `Abort the change being rolled out: the clusters that have it go back to the
rendering they ran before, and no cluster is given it again until the
template changes or ` + "`flotilla rollout restart`" + ` is run.`,
			func(b binding.Object) (string, error) {
				ro := binding.Status(b).Rollout
				if ro == nil || ro.Revision == "" {
					return "", fmt.Errorf("%s has no rollout to abort yet", binding.Ref(b))
				}
				if c := meta.FindStatusCondition(binding.Status(b).Conditions, workv1alpha2.Progressing); c != nil && c.Reason == workv1alpha2.RolloutSucceeded {
					return "", fmt.Errorf("nothing to abort: revision %s has reached every cluster (RolloutSucceeded); change the template to roll out another", ro.Revision)
				}
				setAnnotation(b, rolloutv1alpha1.AbortAnnotation, ro.Revision+"@"+time.Now().UTC().Format(time.RFC3339Nano))
				return "aborted (revision " + ro.Revision + ")", nil
			}},
		{"restart", "Roll the change out again from the first wave", `Start the rollout of the template's latest change again from the first wave,
forgiving failed clusters and undoing an abort.`,
			func(b binding.Object) (string, error) {
				setAnnotation(b, rolloutv1alpha1.PausedAnnotation, "")
				setAnnotation(b, rolloutv1alpha1.RestartAnnotation, time.Now().UTC().Format(time.RFC3339Nano))
				return "restarted", nil
			}},
	}
	for _, v := range verbs {
		flags := rolloutFlags()
		sub := &cobra.Command{
			Use: v.use + " TYPE/NAME", Short: v.short, Long: v.long,
			Example: fmt.Sprintf("  flotilla rollout %s deployment/web -n default", v.use),
			Args:    cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, b, err := rolloutBinding(flags, args[0])
				if err != nil {
					return err
				}
				patch := client.MergeFrom(b.DeepCopyObject().(binding.Object))
				what, err := v.act(b)
				if err != nil {
					return err
				}
				if err := c.Patch(context.Background(), b, patch); err != nil {
					return fmt.Errorf("%s: %w", binding.Ref(b), err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s rollout %s\n", args[0], what)
				return nil
			},
		}
		flags.AddFlags(sub.Flags())
		cmd.AddCommand(sub)
	}
	statusFlags := rolloutFlags()
	status := &cobra.Command{
		Use:   "status TYPE/NAME",
		Short: "Print the rollout's waves and clusters",
		Long: `Print where the staged rollout of a template stands: its Progressing
condition, each wave with its clusters done and failed, and each cluster's
phase (Waiting: keeps the previous rendering; Progressing: has the change,
not yet Healthy for minSuccessTime; Succeeded; Failed).`,
		Example: `  flotilla rollout status deployment/web
  flotilla rollout status deploy/web -n shop`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, b, err := rolloutBinding(statusFlags, args[0])
			if err != nil {
				return err
			}
			return printRollout(cmd, b)
		},
	}
	statusFlags.AddFlags(status.Flags())
	cmd.AddCommand(status)
	return cmd
}

func rolloutFlags() *genericclioptions.ConfigFlags {
	flags := genericclioptions.NewConfigFlags(true)
	flags.ClusterName = nil
	return flags
}

func setAnnotation(b binding.Object, k, v string) {
	a := b.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if v == "" {
		delete(a, k)
	} else {
		a[k] = v
	}
	b.SetAnnotations(a)
}

// rolloutBinding reads the binding of the template arg names.
func rolloutBinding(flags *genericclioptions.ConfigFlags, arg string) (client.Client, binding.Object, error) {
	defaultToLocalStack(flags)
	kubectlWarnings()
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, nil, err
	}
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		return nil, nil, err
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, nil, err
	}
	gvk, name, namespaced, err := resolveWorkload(mapper, arg)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
	if err != nil {
		return nil, nil, err
	}
	if !namespaced {
		ns = ""
	}
	b := binding.New(ns, binding.Name(name, gvk.Kind))
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(b), b); apierrors.IsNotFound(err) {
		where := ""
		if ns != "" {
			where = " in namespace " + ns
		}
		return nil, nil, fmt.Errorf("%s%s is not propagated (no %s): apply it with a PropagationPolicy first", arg, where, binding.Ref(b))
	} else if err != nil {
		return nil, nil, err
	}
	if b.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation] == "" {
		return nil, nil, fmt.Errorf("%s has no staged rollout: annotate its policy with %s=<RolloutStrategy name>", arg, rolloutv1alpha1.StrategyAnnotation)
	}
	return c, b, nil
}

// printRollout writes the rollout of b in kubectl's table style.
func printRollout(cmd *cobra.Command, b binding.Object) error {
	out := cmd.OutOrStdout()
	st := binding.Status(b)
	ro := st.Rollout
	fmt.Fprintf(out, "Strategy:  %s\n", b.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation])
	if c := meta.FindStatusCondition(st.Conditions, workv1alpha2.Progressing); c != nil {
		fmt.Fprintf(out, "Status:    %s (%s)\nMessage:   %s\n", c.Reason, c.Status, c.Message)
	} else {
		fmt.Fprintln(out, "Status:    not yet observed by the rollout controller")
	}
	if ro == nil {
		return nil
	}
	fmt.Fprintf(out, "Revision:  %s\n", ro.Revision)
	if ro.StartTime != nil {
		fmt.Fprintf(out, "Started:   %s\n", ro.StartTime.UTC().Format(time.RFC3339))
	}
	if b.GetAnnotations()[rolloutv1alpha1.PausedAnnotation] == "true" {
		fmt.Fprintln(out, "Paused:    true")
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
	fmt.Fprintln(w, "WAVE\tNAME\tCLUSTERS\tSUCCEEDED\tFAILED\t")
	for i, wv := range ro.Waves {
		mark := ""
		if int32(i) == ro.CurrentWave {
			mark = "<- current"
		}
		fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%s\n", i, wv.Name, wv.Clusters, wv.Succeeded, wv.Failed, mark)
	}
	_ = w.Flush()
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tWAVE\tPHASE\tADMITTED\tHEALTHY-SINCE")
	for _, c := range ro.Clusters {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.Name, waveName(ro, c.Wave), c.Phase, ago(c.AdmittedTime), ago(c.HealthySince))
	}
	return w.Flush()
}

func waveName(ro *workv1alpha2.RolloutStatus, i int32) string {
	if i >= 0 && int(i) < len(ro.Waves) {
		return ro.Waves[i].Name
	}
	return "<none>"
}

// ago prints how long ago t was, as kubectl prints ages; "<none>" when unset.
func ago(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return "<none>"
	}
	return duration.HumanDuration(time.Since(t.Time)) + " ago"
}
