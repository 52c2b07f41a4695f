package interpreter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Case is one interpreter test case in the format of Karmada's customization bundle: the inputs
// of one operation and the expected output. Only the outputs a case names are compared.
type Case struct {
	Name          string                              `json:"name"`
	Description   string                              `json:"description,omitempty"`
	DesiredObj    map[string]any                      `json:"desiredObj,omitempty"`
	ObservedObj   map[string]any                      `json:"observedObj,omitempty"`
	StatusItems   []workv1alpha2.AggregatedStatusItem `json:"statusItems,omitempty"`
	InputReplicas *int32                              `json:"inputReplicas,omitempty"`
	Operation     configv1alpha1.InterpreterOperation `json:"operation"`
	Output        map[string]any                      `json:"output,omitempty"`
}

// ReadCases reads the YAML documents of a test file; empty documents are skipped.
func ReadCases(data []byte) ([]Case, error) {
	r := utilyaml.NewYAMLReader(bufioReader(data))
	var out []Case
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var c Case
		if err := yaml.Unmarshal(doc, &c); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out = append(out, c)
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// Result is what one operation gave, in the output field names of the case format.
type Result map[string]any

// Run performs c's operation through the interpreter, exactly as the controllers call it.
func (in *Interpreter) Run(ctx context.Context, c Case) (Result, error) {
	desired := &unstructured.Unstructured{Object: c.DesiredObj}
	observed := &unstructured.Unstructured{Object: c.ObservedObj}
	// A case may give the one object an operation reads under either name.
	if len(desired.Object) == 0 && c.Operation != configv1alpha1.InterpreterOperationRetain {
		desired = observed
	}
	if len(observed.Object) == 0 && c.Operation != configv1alpha1.InterpreterOperationRetain {
		observed = desired
	}
	need := func(o *unstructured.Unstructured, what string) error {
		if len(o.Object) == 0 {
			return fmt.Errorf("operation %s needs %s", c.Operation, what)
		}
		return nil
	}
	switch c.Operation {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		if err := need(desired, "desiredObj"); err != nil {
			return nil, err
		}
		n, req, _, err := in.GetReplicas(ctx, desired)
		if err != nil {
			return nil, err
		}
		return Result{"replica": n, "requires": req}, nil
	case configv1alpha1.InterpreterOperationReviseReplica:
		if err := need(desired, "desiredObj"); err != nil {
			return nil, err
		}
		if c.InputReplicas == nil {
			return nil, fmt.Errorf("operation ReviseReplica needs inputReplicas")
		}
		tc := workv1alpha2.TargetCluster{Name: "member", Replicas: *c.InputReplicas}
		out, err := in.ReviseReplica(ctx, desired, []workv1alpha2.TargetCluster{tc}, tc)
		if err != nil {
			return nil, err
		}
		return Result{"revised": out.Object}, nil
	case configv1alpha1.InterpreterOperationRetain:
		if err := need(desired, "desiredObj"); err != nil {
			return nil, err
		}
		if err := need(observed, "observedObj"); err != nil {
			return nil, err
		}
		out, err := in.Retain(ctx, desired, observed)
		if err != nil {
			return nil, err
		}
		return Result{"retained": out.Object}, nil
	case configv1alpha1.InterpreterOperationInterpretStatus:
		if err := need(observed, "observedObj"); err != nil {
			return nil, err
		}
		raw, err := in.ReflectStatus(ctx, observed)
		if err != nil {
			return nil, err
		}
		var status any
		if raw != nil {
			if err := json.Unmarshal(raw.Raw, &status); err != nil {
				return nil, err
			}
		}
		return Result{"status": status}, nil
	case configv1alpha1.InterpreterOperationInterpretHealth:
		if err := need(observed, "observedObj"); err != nil {
			return nil, err
		}
		h, err := in.InterpretHealthErr(ctx, observed)
		if err != nil {
			return nil, err
		}
		return Result{"healthy": h == "Healthy"}, nil
	case configv1alpha1.InterpreterOperationAggregateStatus:
		if err := need(desired, "desiredObj"); err != nil {
			return nil, err
		}
		out, err := in.AggregateStatus(ctx, desired, c.StatusItems)
		if err != nil {
			return nil, err
		}
		return Result{"aggregatedStatus": out.Object}, nil
	case configv1alpha1.InterpreterOperationInterpretDependency:
		if err := need(desired, "desiredObj"); err != nil {
			return nil, err
		}
		deps, err := in.Dependencies(ctx, desired)
		if err != nil {
			return nil, err
		}
		list := []any{}
		for _, d := range deps {
			ns := d.Namespace
			if ns == "" {
				ns = desired.GetNamespace()
			}
			m := map[string]any{"apiVersion": d.GroupVersionKind().GroupVersion().String(), "kind": d.Kind, "namespace": ns}
			if d.Name != "" {
				m["name"] = d.Name
			} else {
				m["labelSelector"] = d.Selector
			}
			list = append(list, m)
		}
		return Result{"dependencies": list}, nil
	case configv1alpha1.InterpreterOperationInterpretComponent:
		if err := need(desired, "desiredObj"); err != nil {
			return nil, err
		}
		comps, err := in.Components(ctx, desired)
		if err != nil {
			return nil, err
		}
		return Result{"components": comps}, nil
	}
	return nil, fmt.Errorf("unknown operation %q", c.Operation)
}

// Compare checks got against the case's expected output and returns a description of each
// difference, or "" when they agree. Quantities compare by value, numbers by value, and
// requirements without a namespace ignore the namespace the interpreter fills in.
func Compare(c Case, got Result) string {
	keys := make([]string, 0, len(c.Output))
	for k := range c.Output {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var diffs []string
	for _, k := range keys {
		want := c.Output[k]
		var d string
		switch k {
		case "requires":
			d = typedDiff(want, got[k], &workv1alpha2.ReplicaRequirements{}, &workv1alpha2.ReplicaRequirements{}, func(w, g any) {
				if w.(*workv1alpha2.ReplicaRequirements).Namespace == "" {
					g.(*workv1alpha2.ReplicaRequirements).Namespace = ""
				}
			})
		case "components":
			// Lua tables have no order; components are compared by name.
			d = typedDiff(want, got[k], &[]workv1alpha2.Component{}, &[]workv1alpha2.Component{}, func(w, g any) {
				for _, l := range []*[]workv1alpha2.Component{w.(*[]workv1alpha2.Component), g.(*[]workv1alpha2.Component)} {
					sort.SliceStable(*l, func(i, j int) bool { return (*l)[i].Name < (*l)[j].Name })
				}
			})
		case "dependencies":
			d = jsonDiff(sortDeps(want), sortDeps(got[k]))
		case "aggregatedStatus":
			// The operation's product is the status; the rest is the template.
			d = jsonDiff(statusOf(want), statusOf(got[k]))
		default:
			d = jsonDiff(want, got[k])
		}
		if d != "" {
			diffs = append(diffs, fmt.Sprintf("%s (-want +got):\n%s", k, d))
		}
	}
	return strings.Join(diffs, "\n")
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func jsonDiff(want, got any) string {
	w, g := comparable(normalize(want), normalize(got))
	if reflect.DeepEqual(w, g) {
		return ""
	}
	return cmp.Diff(w, g)
}

func typedDiff(want, got any, w, g any, fix func(w, g any)) string {
	bw, _ := json.Marshal(want)
	bg, _ := json.Marshal(got)
	if err := json.Unmarshal(bw, w); err != nil {
		return "expected output does not decode: " + err.Error()
	}
	if string(bg) != "null" {
		if err := json.Unmarshal(bg, g); err != nil {
			return "output does not decode: " + err.Error()
		}
	}
	if fix != nil {
		fix(w, g)
	}
	if equality.Semantic.DeepEqual(w, g) {
		return ""
	}
	return cmp.Diff(normalize(w), normalize(g))
}

func sortDeps(v any) any {
	list, _ := normalize(v).([]any)
	sort.SliceStable(list, func(i, j int) bool {
		return fmt.Sprint(list[i]) < fmt.Sprint(list[j])
	})
	return list
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

// Exclude in an expected value matches anything (Karmada's marker for times and the like).
const Exclude = "{{EXCLUDE}}"

// comparable prepares want and got for comparison: map entries whose values are zero ("",
// null, 0, false, {}, []) are dropped on both sides, as a typed API object's omitempty fields
// read the same whether set to zero or absent; got takes want's value wherever want says
// Exclude.
func comparable(want, got any) (any, any) {
	switch w := want.(type) {
	case string:
		if w == Exclude {
			return w, w
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		wo, gout := map[string]any{}, map[string]any{}
		for k, wv := range w {
			wv, gv := comparable(wv, g[k])
			if !isZero(wv) {
				wo[k] = wv
			}
			if !isZero(gv) {
				gout[k] = gv
			}
		}
		for k, gv := range g {
			if _, seen := w[k]; !seen {
				if _, gv = comparable(nil, gv); !isZero(gv) {
					gout[k] = gv
				}
			}
		}
		return wo, gout
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		out := make([]any, len(g))
		wo := make([]any, len(w))
		for i := range max(len(w), len(g)) {
			var wv, gv any
			if i < len(w) {
				wv = w[i]
			}
			if i < len(g) {
				gv = g[i]
			}
			wv, gv = comparable(wv, gv)
			if i < len(w) {
				wo[i] = wv
			}
			if i < len(g) {
				out[i] = gv
			}
		}
		return wo, out
	}
	if g, ok := got.(map[string]any); ok {
		_, clean := comparable(map[string]any{}, g)
		return want, clean
	}
	return want, got
}

func isZero(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case float64:
		return t == 0
	case bool:
		return !t
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

func statusOf(v any) any {
	m, _ := normalize(v).(map[string]any)
	return map[string]any{"status": m["status"]}
}
