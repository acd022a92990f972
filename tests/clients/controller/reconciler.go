package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

const (
	// OwnerIndex indexes ConfigMaps by the name of the Widget that controls them.
	OwnerIndex = ".metadata.controller"
	// WidgetLabel on a child ConfigMap names its Widget.
	WidgetLabel = "example.protokube.dev/widget"
	// Finalizer keeps a deleted Widget until the controller has seen its deletion.
	Finalizer = "example.protokube.dev/cleanup"
)

// eventReasons are the reasons of the events that tell what happened to a child.
var eventReasons = map[controllerutil.OperationResult]string{
	controllerutil.OperationResultCreated: "ConfigMapCreated",
	controllerutil.OperationResultUpdated: "ConfigMapUpdated",
}

// WidgetReconciler makes each Widget's child ConfigMap match its spec and reports it in its status.
type WidgetReconciler struct {
	client.Client
	Recorder recorder.EventRecorder
}

// SetupWithManager indexes ConfigMaps by their controlling Widget and registers the controller,
// which also watches the ConfigMaps it owns.
func (r *WidgetReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, OwnerIndex, func(obj client.Object) []string {
		owner := metav1.GetControllerOf(obj)
		if owner == nil || owner.APIVersion != GroupVersion.String() || owner.Kind != "Widget" {
			return nil
		}
		return []string{owner.Name}
	})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Owns(&corev1.ConfigMap{}).Named("widget").Complete(r)
}

// Reconcile creates or updates the Widget's ConfigMap, deletes children of an earlier name and
// writes the status.
func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	widget := &Widget{}
	if err := r.Get(ctx, req.NamespacedName, widget); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !widget.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, widget) // the garbage collector removes the children
	}
	if !controllerutil.ContainsFinalizer(widget, Finalizer) {
		return ctrl.Result{}, r.patchFinalizers(ctx, widget, controllerutil.AddFinalizer)
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: widget.ChildName(), Namespace: widget.Namespace}}
	result, err := controllerutil.CreateOrUpdate(ctx, r.Client, child, func() error {
		if child.Labels == nil {
			child.Labels = map[string]string{}
		}
		child.Labels[WidgetLabel] = widget.Name
		child.Data = widget.Spec.Data
		if child.ResourceVersion != "" && metav1.GetControllerOf(child) == nil {
			// orphaned by the garbage collector (the Widget was deleted with propagationPolicy
			// Orphan, which the cache's view of it may not show yet): not adopted again
			return nil
		}
		return controllerutil.SetControllerReference(widget, child, r.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("child ConfigMap %s: %w", child.Name, err)
	}
	if reason, changed := eventReasons[result]; changed {
		r.Recorder.Eventf(widget, child, corev1.EventTypeNormal, reason, "Reconcile", "ConfigMap %s %s", child.Name, result)
	}
	if err := r.deleteStale(ctx, widget); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.writeStatus(ctx, widget)
}

// finalize removes the controller's finalizer from a Widget being deleted, with an event.
func (r *WidgetReconciler) finalize(ctx context.Context, widget *Widget) error {
	if !controllerutil.ContainsFinalizer(widget, Finalizer) {
		return nil
	}
	r.Recorder.Eventf(widget, nil, corev1.EventTypeNormal, "Finalized", "Delete", "Widget %s let go", widget.Name)
	return client.IgnoreNotFound(r.patchFinalizers(ctx, widget, controllerutil.RemoveFinalizer))
}

// patchFinalizers adds or removes Finalizer by a JSON merge patch that carries the
// resourceVersion read (a conflict when the Widget changed since).
func (r *WidgetReconciler) patchFinalizers(ctx context.Context, widget *Widget, edit func(client.Object, string) bool) error {
	base := widget.DeepCopy()
	edit(widget, Finalizer)
	return r.Patch(ctx, widget, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// deleteStale deletes the Widget's children that have another name than the one it wants now,
// found through the cache's OwnerIndex.
func (r *WidgetReconciler) deleteStale(ctx context.Context, widget *Widget) error {
	children := &corev1.ConfigMapList{}
	if err := r.List(ctx, children, client.InNamespace(widget.Namespace), client.MatchingFields{OwnerIndex: widget.Name}); err != nil {
		return err
	}
	for i := range children.Items {
		stale := &children.Items[i]
		if stale.Name == widget.ChildName() || !metav1.IsControlledBy(stale, widget) {
			continue
		}
		if err := r.Delete(ctx, stale, client.Preconditions{UID: &stale.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return err
		}
		r.Recorder.Eventf(widget, stale, corev1.EventTypeNormal, "ConfigMapDeleted", "Reconcile", "stale ConfigMap %s deleted", stale.Name)
	}
	return nil
}

func (r *WidgetReconciler) writeStatus(ctx context.Context, widget *Widget) error {
	before := widget.DeepCopy()
	widget.Status.ObservedGeneration = widget.Generation
	widget.Status.ConfigMapName = widget.ChildName()
	meta.SetStatusCondition(&widget.Status.Conditions, metav1.Condition{
		Type:               "Ready",
		Status:             metav1.ConditionTrue,
		ObservedGeneration: widget.Generation,
		Reason:             "ConfigMapReconciled",
		Message:            "ConfigMap " + widget.ChildName() + " matches the spec",
	})
	if equality.Semantic.DeepEqual(before.Status, widget.Status) {
		return nil
	}
	return r.Status().Update(ctx, widget)
}
