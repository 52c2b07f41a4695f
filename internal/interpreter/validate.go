package interpreter

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter/lua"
)

// ruleFields names each operation's rule under spec.customizations.
var ruleFields = map[configv1alpha1.InterpreterOperation]string{
	configv1alpha1.InterpreterOperationInterpretReplica:    "replicaResource",
	configv1alpha1.InterpreterOperationReviseReplica:       "replicaRevision",
	configv1alpha1.InterpreterOperationRetain:              "retention",
	configv1alpha1.InterpreterOperationInterpretStatus:     "statusReflection",
	configv1alpha1.InterpreterOperationAggregateStatus:     "statusAggregation",
	configv1alpha1.InterpreterOperationInterpretHealth:     "healthInterpretation",
	configv1alpha1.InterpreterOperationInterpretDependency: "dependencyInterpretation",
	configv1alpha1.InterpreterOperationInterpretComponent:  "componentResource",
}

// ValidateCustomization checks what CEL cannot: that every script compiles, defines the function
// its rule calls (GetReplicas for replicaResource, ...) and calls no undefined function. Errors
// name the rule's luaScript field and the script's line.
func ValidateCustomization(c *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
	var errs field.ErrorList
	base := field.NewPath("spec", "customizations")
	for op, rule := range ruleFields {
		script := lua.Script(&c.Spec.Customizations, op)
		if script == "" {
			continue
		}
		if err := lua.Check(script, lua.FunctionName[op]); err != nil {
			errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: base.Child(rule, "luaScript").String(),
				BadValue: offendingLine(script, err.Error()), Detail: err.Error()})
		}
	}
	return errs
}

// offendingLine is the text of the line an error names ("line N: ..."), shown as the bad
// value; the whole script would drown the message.
func offendingLine(script, msg string) any {
	var n int
	if _, err := fmt.Sscanf(msg, "line %d:", &n); err != nil || n < 1 {
		return field.OmitValueType{}
	}
	lines := strings.Split(script, "\n")
	if n > len(lines) {
		return field.OmitValueType{}
	}
	return strings.TrimSpace(lines[n-1])
}

// ValidateWebhookConfiguration checks each webhook as Karmada's webhook does: its name is a
// fully qualified domain name (at least two dot-separated DNS labels, such as
// replicas.example.com) and unique in the configuration; its interpreterContextVersions are
// unique DNS-1035 labels and include v1alpha1, the one version Karmada sends; each rule lists
// at least one operation, each one Karmada's webhook accepts (webhookOperations), and "*"
// only alone; and its
// clientConfig has exactly one of url and service, a URL being https with no user info,
// fragment or query, and a caBundle holding PEM certificates. (The CRD's schema checks
// timeoutSeconds.)
func ValidateWebhookConfiguration(c *configv1alpha1.ResourceInterpreterWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, w := range c.Webhooks {
		hook := field.NewPath("webhooks").Index(i)
		errs = append(errs, validation.IsFullyQualifiedDomainName(hook.Child("name"), w.Name)...)
		if names[w.Name] {
			errs = append(errs, field.Duplicate(hook.Child("name"), w.Name))
		}
		names[w.Name] = true
		errs = append(errs, validateContextVersions(w.InterpreterContextVersions, hook.Child("interpreterContextVersions"))...)
		for j, r := range w.Rules {
			ops := hook.Child("rules").Index(j).Child("operations")
			switch {
			case len(r.Operations) == 0:
				errs = append(errs, field.Required(ops, "list the interpreter operations, or \"*\" for all"))
			case len(r.Operations) > 1 && slices.Contains(r.Operations, configv1alpha1.InterpreterOperationAll):
				errs = append(errs, field.Invalid(ops, r.Operations, "\"*\" stands for every operation and must be listed alone"))
			}
			for k, op := range r.Operations {
				if !slices.Contains(webhookOperations, op) {
					errs = append(errs, field.NotSupported(ops.Index(k), op, webhookOperationNames()))
				}
			}
		}
		p := hook.Child("clientConfig")
		cc := w.ClientConfig
		switch {
		case cc.URL == nil && cc.Service == nil:
			errs = append(errs, field.Required(p, "exactly one of url and service is required"))
		case cc.URL != nil && cc.Service != nil:
			errs = append(errs, field.Invalid(p, "url and service", "exactly one of url and service may be set"))
		case cc.URL != nil:
			u, err := url.Parse(*cc.URL)
			switch {
			case err != nil:
				errs = append(errs, field.Invalid(p.Child("url"), *cc.URL, err.Error()))
			case u.Scheme != "https":
				errs = append(errs, field.Invalid(p.Child("url"), *cc.URL, "the scheme must be https"))
			case u.User != nil || u.Fragment != "" || u.RawQuery != "":
				errs = append(errs, field.Invalid(p.Child("url"), *cc.URL, "user info, query and fragment are not allowed"))
			}
		}
		if len(cc.CABundle) > 0 && !hasCertificate(cc.CABundle) {
			errs = append(errs, field.Invalid(p.Child("caBundle"), "<bytes>", "holds no PEM-encoded certificate"))
		}
	}
	return errs
}

// webhookOperations are the operations a webhook's rules may name, as Karmada's webhook
// accepts them (Prune is an operation of the interpreter, but no webhook's).
var webhookOperations = []configv1alpha1.InterpreterOperation{
	configv1alpha1.InterpreterOperationAll,
	configv1alpha1.InterpreterOperationInterpretReplica,
	configv1alpha1.InterpreterOperationReviseReplica,
	configv1alpha1.InterpreterOperationRetain,
	configv1alpha1.InterpreterOperationAggregateStatus,
	configv1alpha1.InterpreterOperationInterpretStatus,
	configv1alpha1.InterpreterOperationInterpretHealth,
	configv1alpha1.InterpreterOperationInterpretDependency,
	configv1alpha1.InterpreterOperationInterpretComponent,
}

func webhookOperationNames() []string {
	out := make([]string, len(webhookOperations))
	for i, op := range webhookOperations {
		out[i] = string(op)
	}
	return out
}

// validateContextVersions checks a webhook's interpreterContextVersions.
func validateContextVersions(versions []string, fldPath *field.Path) field.ErrorList {
	want := configv1alpha1.SchemeGroupVersion.Version
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Duplicate(fldPath.Index(i), v))
			continue
		}
		seen[v] = true
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(fldPath.Index(i), v, msg))
		}
	}
	if !seen[want] {
		errs = append(errs, field.Invalid(fldPath, versions, fmt.Sprintf("must include %s, the ResourceInterpreterContext version Karmada sends", want)))
	}
	return errs
}

func hasCertificate(data []byte) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if b.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(b.Bytes); err == nil {
				return true
			}
		}
	}
}
