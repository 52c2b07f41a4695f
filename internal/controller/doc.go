// Package controller holds Flotilla's controllers, one package each
// (internal/controller/<name>), wired together by internal/controllermanager.
// A controller never imports another: what they share (names of labels and
// annotations, finalizers, the binding view, the status gate, the queue
// settings) lives in domain packages such as internal/binding,
// internal/template, internal/statusgate and internal/reconcilequeue.
// layering_test.go enforces this. docs/architecture.md describes the flow
// between them and who writes which field.
package controller
