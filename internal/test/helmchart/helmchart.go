// Package helmchart renders and lints the Helm chart charts/flotilla with
// the Helm library, as `helm template` and `helm lint` do, so that tests
// check the chart on machines without the helm CLI: the unit tests in this
// package and the end-to-end test that validates every rendered object on a
// real API server.
package helmchart

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Release name and namespace of the chart's documented install command,
// `helm install flotilla charts/flotilla -n flotilla-system --create-namespace`.
const (
	ReleaseName      = "flotilla"
	DefaultNamespace = "flotilla-system"
)

// KubeVersion is the host cluster version the chart is rendered and linted
// for: the Kubernetes libraries Flotilla is built on. (The Helm library's
// own default, v1.20, is older than the chart's kubeVersion allows.)
var KubeVersion = chartutil.KubeVersion{Version: "v1.37.0", Major: "1", Minor: "37"}

// Dir returns the chart's directory, charts/flotilla under the module root,
// found by walking up from the working directory to go.mod. Tests run in
// their package's directory, so this works from any package of the module.
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "charts", "flotilla"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run from inside the flotilla module")
		}
		dir = parent
	}
}

// Rendered is one render of the chart.
type Rendered struct {
	// Manifest is every rendered object, hooks included (hooks last), as
	// one YAML stream.
	Manifest string
	// Objects are the objects of Manifest in its order; each object's
	// template is in Sources at the same index.
	Objects []*unstructured.Unstructured
	Sources []string
	// Notes is the rendered NOTES.txt.
	Notes string
}

// Render renders the chart in dir for release ReleaseName in namespace,
// with values over values.yaml, without a cluster (lookup finds nothing, so
// the PKI is generated). Errors: the chart does not load or a template
// fails.
func Render(dir, namespace string, values map[string]any) (*Rendered, error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load the chart in %s: %w", dir, err)
	}
	cfg := &action.Configuration{Log: func(string, ...any) {}}
	install := action.NewInstall(cfg)
	install.ReleaseName = ReleaseName
	install.Namespace = namespace
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.IncludeCRDs = true
	install.KubeVersion = &KubeVersion
	rel, err := install.Run(chrt, values)
	if err != nil {
		return nil, fmt.Errorf("render the chart: %w", err)
	}
	docs := []struct{ source, yaml string }{}
	for _, d := range strings.Split(rel.Manifest, "\n---\n") {
		source := ""
		if first, _, ok := strings.Cut(strings.TrimPrefix(d, "---\n"), "\n"); ok && strings.HasPrefix(first, "# Source: ") {
			source = strings.TrimPrefix(first, "# Source: ")
		}
		docs = append(docs, struct{ source, yaml string }{source, d})
	}
	hooks := rel.Hooks
	sort.SliceStable(hooks, func(i, j int) bool { return hooks[i].Weight < hooks[j].Weight })
	for _, h := range hooks {
		docs = append(docs, struct{ source, yaml string }{h.Path, h.Manifest})
	}
	out := &Rendered{Notes: rel.Info.Notes}
	var b strings.Builder
	for _, d := range docs {
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(d.yaml), 4096)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", d.source, err)
			}
			if len(raw) == 0 || string(raw) == "null" {
				continue
			}
			// As unstructured JSON, so that integers stay int64.
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(raw); err != nil {
				return nil, fmt.Errorf("%s: %w", d.source, err)
			}
			out.Objects = append(out.Objects, obj)
			out.Sources = append(out.Sources, d.source)
		}
		doc := strings.TrimPrefix(strings.TrimSpace(d.yaml), "---\n")
		if !strings.HasPrefix(doc, "# Source: ") {
			doc = "# Source: " + d.source + "\n" + doc
		}
		fmt.Fprintf(&b, "---\n%s\n", doc)
	}
	out.Manifest = b.String()
	return out, nil
}

// Lint runs `helm lint`'s checks on the chart in dir with values over
// values.yaml and returns its messages of severity warning and above.
func Lint(dir, namespace string, values map[string]any) []support.Message {
	var out []support.Message
	for _, m := range lint.AllWithKubeVersion(dir, values, namespace, &KubeVersion).Messages {
		if m.Severity >= support.WarningSev {
			out = append(out, m)
		}
	}
	return out
}
