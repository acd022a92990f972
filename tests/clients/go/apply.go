package main

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// stepApply: server-side apply with the typed apply configurations: field ownership, a conflict with
// a second manager, force, extracting a manager's configuration, and an apply that removes a field.
func stepApply(e *env, step string) {
	c := e.cs.CoreV1().ConfigMaps(e.ns)
	first := corev1ac.ConfigMap("cg-ssa", e.ns).
		WithLabels(map[string]string{"owner": "alpha"}).
		WithData(map[string]string{"shared": "alpha", "alpha-only": "1"})
	cm, err := c.Apply(e.ctx, first, metav1.ApplyOptions{FieldManager: "alpha"})
	check(err, "apply as alpha (create)")
	if cm.Data["shared"] != "alpha" || len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "alpha" ||
		cm.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		fail("after alpha's apply: data %v, managedFields %+v", cm.Data, cm.ManagedFields)
	}
	// Applying the same again changes nothing.
	again, err := c.Apply(e.ctx, first, metav1.ApplyOptions{FieldManager: "alpha"})
	check(err, "apply as alpha again")
	if again.ResourceVersion != cm.ResourceVersion {
		fail("a no-op apply changed the resourceVersion %s -> %s", cm.ResourceVersion, again.ResourceVersion)
	}
	second := corev1ac.ConfigMap("cg-ssa", e.ns).WithData(map[string]string{"shared": "beta", "beta-only": "2"})
	_, err = c.Apply(e.ctx, second, metav1.ApplyOptions{FieldManager: "beta"})
	if !apierrors.IsConflict(err) {
		fail("beta applying alpha's field: want Conflict, got %v", describe(err))
	}
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 ||
		!strings.Contains(status.Status().Details.Causes[0].Field, "shared") {
		fail("the conflict's causes do not name .data.shared: %v", describe(err))
	}
	forced, err := c.Apply(e.ctx, second, metav1.ApplyOptions{FieldManager: "beta", Force: true})
	check(err, "beta applying with force")
	if forced.Data["shared"] != "beta" || forced.Data["alpha-only"] != "1" || forced.Data["beta-only"] != "2" {
		fail("after the forced apply: %v", forced.Data)
	}
	managers := map[string]bool{}
	for _, entry := range forced.ManagedFields {
		managers[entry.Manager] = true
	}
	if !managers["alpha"] || !managers["beta"] {
		fail("managedFields after the forced apply: %+v", forced.ManagedFields)
	}
	// What each manager owns, as an apply configuration.
	alpha, err := corev1ac.ExtractConfigMap(forced, "alpha")
	check(err, "extract alpha's configuration")
	if _, has := alpha.Data["shared"]; has || alpha.Data["alpha-only"] != "1" || alpha.Labels["owner"] != "alpha" {
		fail("alpha's extracted configuration: data %v labels %v", alpha.Data, alpha.Labels)
	}
	// alpha applies without its label: the label goes (alpha was its only owner).
	shrunk, err := c.Apply(e.ctx, corev1ac.ConfigMap("cg-ssa", e.ns).WithData(map[string]string{"alpha-only": "1"}), metav1.ApplyOptions{FieldManager: "alpha"})
	check(err, "apply as alpha without the label")
	if _, has := shrunk.Labels["owner"]; has {
		fail("the label alpha no longer applies is still there: %v", shrunk.Labels)
	}
	// An update by a third manager is recorded as an Update operation.
	shrunk.Data["by-update"] = "3"
	updated, err := c.Update(e.ctx, shrunk, metav1.UpdateOptions{FieldManager: "gamma"})
	check(err, "update as gamma")
	ops := map[string]metav1.ManagedFieldsOperationType{}
	for _, entry := range updated.ManagedFields {
		ops[entry.Manager] = entry.Operation
	}
	if ops["gamma"] != metav1.ManagedFieldsOperationUpdate {
		fail("gamma's update is not in managedFields: %+v", updated.ManagedFields)
	}

	// A Deployment applied, then its replicas by another manager through the scale subresource.
	d := e.cs.AppsV1().Deployments(e.ns)
	labels := map[string]string{"app": "cg-ssa"}
	deployment := appsv1ac.Deployment("cg-ssa", e.ns).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(2).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("web").WithImage("nginx:1.27").
				WithPorts(corev1ac.ContainerPort().WithContainerPort(80).WithName("http"))))))
	applied, err := d.Apply(e.ctx, deployment, metav1.ApplyOptions{FieldManager: "alpha"})
	check(err, "apply a deployment")
	if *applied.Spec.Replicas != 2 || applied.Spec.Template.Spec.Containers[0].Ports[0].Protocol != "TCP" {
		fail("the applied deployment: replicas %d, ports %+v", *applied.Spec.Replicas, applied.Spec.Template.Spec.Containers[0].Ports)
	}
	deployment.Spec.Template.Spec.Containers[0].WithImage("nginx:1.28")
	applied, err = d.Apply(e.ctx, deployment, metav1.ApplyOptions{FieldManager: "alpha"})
	check(err, "apply a deployment again with a new image")
	if applied.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" || len(applied.Spec.Template.Spec.Containers) != 1 {
		fail("the re-applied deployment: %+v", applied.Spec.Template.Spec.Containers)
	}
	check(d.Delete(e.ctx, "cg-ssa", metav1.DeleteOptions{}), "delete the deployment")
	check(c.Delete(e.ctx, "cg-ssa", metav1.DeleteOptions{}), "delete the configmap")
	e.out(step, "apply (create), no-op apply, Conflict naming .data.shared, force, ExtractConfigMap, field removal, Update entry; deployment applied twice")
}
