package reconciler

import (
	"context"
	"fmt"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UpdateStatus writes obj's status with an update of its status subresource
// (client.Status().Update), sending only what the API server reads from such
// a body: the object's name, namespace, uid and resourceVersion, and its
// status. kube-apiserver takes nothing else from a status update (a custom
// resource's status strategy copies the stored object and keeps the body's
// status alone; its reset fields are metadata and spec), so a Work's
// manifests, most of its bytes, are not sent, decoded and schema-coerced
// with every report. obj is a pointer to a struct with ObjectMeta and Status
// fields, of a custom resource with the status subresource (Karmada's Work,
// ResourceBinding, ClusterResourceBinding).
//
// On success obj holds the API server's answer, as after
// client.Status().Update; on error (a conflict when the resourceVersion is
// not the stored one, or the API server's) obj is unchanged.
func UpdateStatus(ctx context.Context, c client.Client, obj client.Object) error {
	body, err := statusBody(obj)
	if err != nil {
		return err
	}
	if err := c.Status().Update(ctx, body); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(body).Elem())
	return nil
}

// UpdateSpec updates obj (client.Update) without its status in the body: on
// a custom resource with the status subresource the API server keeps the
// stored status and ignores the body's, so sending it only costs the
// decoding. The update is guarded by obj's resourceVersion as usual. On
// success obj holds the API server's answer, its status the stored one; on
// error obj is unchanged. obj is a pointer to a struct with a Status field.
func UpdateSpec(ctx context.Context, c client.Client, obj client.Object) error {
	body, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T: its DeepCopyObject is not a client.Object", obj)
	}
	status := reflect.ValueOf(body).Elem().FieldByName("Status")
	if !status.IsValid() || !status.CanSet() {
		return fmt.Errorf("%T has no Status field", obj)
	}
	status.SetZero()
	body.SetManagedFields(nil) // the stored ones stay
	if err := c.Update(ctx, body); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(body).Elem())
	return nil
}

// statusBody is a new object of obj's type holding obj's identity and a
// deep copy of its status, nothing else.
func statusBody(obj client.Object) (client.Object, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%T is not a pointer to a struct", obj)
	}
	status := v.Elem().FieldByName("Status")
	if !status.IsValid() {
		return nil, fmt.Errorf("%T has no Status field", obj)
	}
	body := reflect.New(v.Elem().Type())
	b, ok := body.Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a client.Object", obj)
	}
	// A deep copy: the answer is decoded into body, and a decoder may
	// reuse the slices it finds there. The status type's own DeepCopy
	// when it has one (generated types do), not the whole object's.
	var copied reflect.Value
	if m := status.Addr().MethodByName("DeepCopy"); m.IsValid() && m.Type().NumIn() == 0 && m.Type().NumOut() == 1 && m.Type().Out(0) == status.Addr().Type() {
		copied = m.Call(nil)[0].Elem()
	} else {
		copied = reflect.ValueOf(obj.DeepCopyObject()).Elem().FieldByName("Status")
	}
	body.Elem().FieldByName("Status").Set(copied)
	if tm := body.Elem().FieldByName("TypeMeta"); tm.IsValid() {
		tm.Set(v.Elem().FieldByName("TypeMeta"))
	}
	b.SetName(obj.GetName())
	b.SetNamespace(obj.GetNamespace())
	b.SetUID(obj.GetUID())
	b.SetResourceVersion(obj.GetResourceVersion())
	return b, nil
}
