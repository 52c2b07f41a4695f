package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/lua"
)

// interpretOperations maps karmadactl's --operation spellings to operations.
var interpretOperations = map[string]configv1alpha1.InterpreterOperation{
	"interpretreplica":    configv1alpha1.InterpreterOperationInterpretReplica,
	"revisereplica":       configv1alpha1.InterpreterOperationReviseReplica,
	"retain":              configv1alpha1.InterpreterOperationRetain,
	"aggregatestatus":     configv1alpha1.InterpreterOperationAggregateStatus,
	"interpretstatus":     configv1alpha1.InterpreterOperationInterpretStatus,
	"interprethealth":     configv1alpha1.InterpreterOperationInterpretHealth,
	"interpretdependency": configv1alpha1.InterpreterOperationInterpretDependency,
	"interpretcomponent":  configv1alpha1.InterpreterOperationInterpretComponent,
}

type interpretOptions struct {
	file, operation, desiredFile, observedFile, test string
	statusFiles                                      []string
	check                                            bool
	desiredReplica                                   int32
}

func newInterpretCommand() *cobra.Command {
	var o interpretOptions
	cmd := &cobra.Command{
		Use:   "interpret (-f CUSTOMIZATION --check | -f CUSTOMIZATION --operation OP ... | [-f CUSTOMIZATION] --test DIR|FILE)",
		Short: "Check or run a ResourceInterpreterCustomization locally, as karmadactl interpret does",
		Long: `Run the Lua scripts of a ResourceInterpreterCustomization on local files, with the same
interpreter the controller manager uses, without a control plane.

--check validates every script as admission does (syntax, the function each rule must define,
calls to undefined functions). --operation runs one operation on the given objects and prints
its result; a script that fails is an error. --test runs test cases in the format of Karmada's
customization bundle (a directory holding customizations.yaml and testdata/*.yaml, or one case
file) and compares each result with the case's expected output. The cases run against, in
order: the customization given with -f (a case for another kind fails); else the
customizations.yaml in that directory; else Flotilla's bundled customizations.

Operations: interpretReplica, reviseReplica, retain, interpretStatus, interpretHealth,
aggregateStatus, interpretDependency, interpretComponent (any case).`,
		Example: `  # Validate the scripts
  flotilla interpret -f customization.yaml --check

  # Replicas and requirements of one object
  flotilla interpret -f customization.yaml --operation interpretReplica --desired-file obj.yaml

  # Revise the replicas for one cluster
  flotilla interpret -f customization.yaml --operation reviseReplica --desired-file obj.yaml --desired-replica 2

  # Retain member-owned fields
  flotilla interpret -f customization.yaml --operation retain --desired-file desired.yaml --observed-file observed.yaml

  # Aggregate the statuses of two clusters (AggregatedStatusItem files)
  flotilla interpret -f customization.yaml --operation aggregateStatus --desired-file obj.yaml --status-file member1.yaml --status-file member2.yaml

  # Run the test cases of a bundled kind
  flotilla interpret --test internal/interpreter/thirdparty/customizations/apps.kruise.io/v1alpha1/CloneSet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return interpret(cmd.Context(), cmd.OutOrStdout(), o, cmd.Flags().Changed("desired-replica"))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "filename", "f", "", "the ResourceInterpreterCustomization file")
	f.BoolVar(&o.check, "check", false, "validate the customization's scripts")
	f.StringVar(&o.operation, "operation", "", "the operation to run (see above)")
	f.StringVar(&o.desiredFile, "desired-file", "", "the resource template (desired object)")
	f.StringVar(&o.observedFile, "observed-file", "", "the member's object (observed object)")
	f.StringArrayVar(&o.statusFiles, "status-file", nil, "an AggregatedStatusItem (clusterName, status, applied, health), for aggregateStatus; repeatable")
	f.Int32Var(&o.desiredReplica, "desired-replica", 0, "the replicas to set, for reviseReplica")
	f.StringVar(&o.test, "test", "", "a directory of test cases (customizations.yaml and testdata/), or one case file")
	return cmd
}

func readCustomization(path string) (*configv1alpha1.ResourceInterpreterCustomization, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c configv1alpha1.ResourceInterpreterCustomization
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s is not a ResourceInterpreterCustomization: %w", path, err)
	}
	if c.Kind != "ResourceInterpreterCustomization" {
		return nil, fmt.Errorf("%s holds a %q, not a ResourceInterpreterCustomization", path, c.Kind)
	}
	return &c, nil
}

func readObject(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func interpret(ctx context.Context, w io.Writer, o interpretOptions, replicaSet bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var custom *configv1alpha1.ResourceInterpreterCustomization
	if o.file != "" {
		c, err := readCustomization(o.file)
		if err != nil {
			return err
		}
		custom = c
	}
	switch {
	case o.test != "":
		return interpretTests(ctx, w, custom, o.test)
	case o.check:
		if custom == nil {
			return fmt.Errorf("--check needs the customization: -f FILE")
		}
		errs := interpreter.ValidateCustomization(custom)
		if len(errs) > 0 {
			for _, e := range errs {
				fmt.Fprintln(w, e.Error())
			}
			return fmt.Errorf("ResourceInterpreterCustomization %s is invalid", custom.Name)
		}
		fmt.Fprintf(w, "ResourceInterpreterCustomization %s is valid\n", custom.Name)
		return nil
	case o.operation != "":
		if custom == nil {
			return fmt.Errorf("--operation needs the customization: -f FILE")
		}
		op, ok := interpretOperations[strings.ToLower(o.operation)]
		if !ok {
			return fmt.Errorf("unknown --operation %q; use one of interpretReplica, reviseReplica, retain, interpretStatus, interpretHealth, aggregateStatus, interpretDependency, interpretComponent", o.operation)
		}
		c := interpreter.Case{Operation: op}
		var err error
		if c.DesiredObj, err = readObject(o.desiredFile); err != nil {
			return err
		}
		if c.ObservedObj, err = readObject(o.observedFile); err != nil {
			return err
		}
		if op == configv1alpha1.InterpreterOperationReviseReplica {
			if !replicaSet {
				return fmt.Errorf("reviseReplica needs --desired-replica")
			}
			c.InputReplicas = &o.desiredReplica
		}
		for _, f := range o.statusFiles {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			var item workv1alpha2.AggregatedStatusItem
			if err := yaml.Unmarshal(data, &item); err != nil {
				return fmt.Errorf("%s is not an AggregatedStatusItem: %w", f, err)
			}
			c.StatusItems = append(c.StatusItems, item)
		}
		if lua.Script(&custom.Spec.Customizations, op) == "" {
			return fmt.Errorf("ResourceInterpreterCustomization %s has no rule for %s (spec.customizations); nothing to run", custom.Name, op)
		}
		in := interpreter.New(nil)
		in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{*custom})
		if err := targets(custom, c); err != nil {
			return err
		}
		got, err := in.Run(ctx, c)
		if err != nil {
			return err
		}
		out, err := yaml.Marshal(map[string]any(got))
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	return fmt.Errorf("say what to do: --check, --operation OP or --test DIR (see --help)")
}

// targets refuses objects the customization does not apply to: they would silently get the
// built-in answers instead.
func targets(c *configv1alpha1.ResourceInterpreterCustomization, cs interpreter.Case) error {
	for _, m := range []map[string]any{cs.DesiredObj, cs.ObservedObj} {
		if m == nil {
			continue
		}
		u := unstructured.Unstructured{Object: m}
		if u.GetAPIVersion() != c.Spec.Target.APIVersion || u.GetKind() != c.Spec.Target.Kind {
			return fmt.Errorf("the object is a %s %s; customization %s targets %s %s", u.GetAPIVersion(), u.GetKind(), c.Name, c.Spec.Target.APIVersion, c.Spec.Target.Kind)
		}
	}
	return nil
}

// interpretTests runs test-case files and prints one line per case, kubectl-like, with the
// differences under a failing one. It fails when any case fails.
func interpretTests(ctx context.Context, w io.Writer, custom *configv1alpha1.ResourceInterpreterCustomization, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	var files []string
	if info.IsDir() {
		if custom == nil {
			if c, err := readCustomization(filepath.Join(path, "customizations.yaml")); err == nil {
				custom = c
			}
		}
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(p)) == "testdata" && strings.HasSuffix(p, ".yaml") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return err
		}
		sort.Strings(files)
	} else {
		files = []string{path}
	}
	if len(files) == 0 {
		return fmt.Errorf("no test cases under %s (expected testdata/*.yaml)", path)
	}
	in := interpreter.New(nil)
	source := "the bundled customizations"
	if custom != nil {
		in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{*custom})
		source = "ResourceInterpreterCustomization " + custom.Name
	}
	fmt.Fprintf(w, "Running the cases against %s\n", source)
	passed, failed := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		cases, err := interpreter.ReadCases(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, c := range cases {
			diff := ""
			if custom != nil {
				// A case for another kind would silently get the bundled or built-in answer.
				if err := targets(custom, c); err != nil {
					diff = err.Error()
				}
			}
			if diff == "" {
				got, err := in.Run(ctx, c)
				if err != nil {
					diff = err.Error()
				} else {
					diff = interpreter.Compare(c, got)
				}
			}
			if diff == "" {
				passed++
				fmt.Fprintf(w, "PASS  %s: %s\n", filepath.Base(f), c.Name)
				continue
			}
			failed++
			fmt.Fprintf(w, "FAIL  %s: %s\n%s\n", filepath.Base(f), c.Name, indentLines(diff, "      "))
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return fmt.Errorf("%d of %d cases failed", failed, passed+failed)
	}
	return nil
}

func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}
