package interpreter

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"

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

// ValidateWebhookConfiguration checks each webhook's clientConfig: a URL must be https with no
// user info, fragment or query, exactly one of url and service is set, and a caBundle must hold
// PEM certificates.
func ValidateWebhookConfiguration(c *configv1alpha1.ResourceInterpreterWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	for i, w := range c.Webhooks {
		p := field.NewPath("webhooks").Index(i).Child("clientConfig")
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
