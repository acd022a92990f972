package main

import (
	"encoding/json"
	"fmt"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// stepDiscovery: the discovery client (aggregated discovery v2), the cached discovery client and a
// deferred RESTMapper, the OpenAPI v3 root and a group's document.
func stepDiscovery(e *env, step string) {
	dc, err := discovery.NewDiscoveryClientForConfig(e.config)
	check(err, "discovery client")
	mark := e.rec.mark()
	groups, resources, err := dc.ServerGroupsAndResources()
	check(err, "ServerGroupsAndResources")
	aggregated := false
	for _, x := range e.rec.since(mark) {
		path, _, _ := strings.Cut(x.url, "?")
		if (path == "/api" || path == "/apis") && strings.Contains(x.responseType, "as=APIGroupDiscoveryList") {
			aggregated = true
		}
	}
	if !aggregated {
		fail("discovery did not use aggregated discovery (v2): %+v", e.rec.since(mark))
	}
	names := map[string]bool{}
	for _, g := range groups {
		names[g.Name] = true
	}
	for _, want := range []string{"", "apps", "batch", "coordination.k8s.io", "apiextensions.k8s.io", "rbac.authorization.k8s.io"} {
		if !names[want] {
			fail("ServerGroupsAndResources has no group %q: %v", want, names)
		}
	}
	var pods bool
	for _, list := range resources {
		if list.GroupVersion == "v1" {
			for _, r := range list.APIResources {
				if r.Name == "pods" && r.Kind == "Pod" && r.Namespaced && strings.Contains(strings.Join(r.Verbs, ","), "watch") {
					pods = true
				}
			}
		}
	}
	if !pods {
		fail("v1 pods (namespaced, watchable) not in the discovered resources")
	}
	preferred, err := dc.ServerPreferredResources()
	check(err, "ServerPreferredResources")
	var deploymentsIn string
	for _, list := range preferred {
		for _, r := range list.APIResources {
			if r.Name == "deployments" {
				deploymentsIn = list.GroupVersion
			}
		}
	}
	if deploymentsIn != "apps/v1" {
		fail("preferred resources have deployments in %q", deploymentsIn)
	}

	// The raw aggregated document, decoded as client-go's type.
	raw, err := dc.RESTClient().Get().AbsPath("/apis").
		SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").DoRaw(e.ctx)
	check(err, "GET /apis as APIGroupDiscoveryList")
	var doc apidiscoveryv2.APIGroupDiscoveryList
	check(json.Unmarshal(raw, &doc), "decode APIGroupDiscoveryList")
	if doc.Kind != "APIGroupDiscoveryList" || len(doc.Items) == 0 || doc.Items[0].Versions[0].Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
		fail("APIGroupDiscoveryList: kind %q, %d items", doc.Kind, len(doc.Items))
	}

	// The cached discovery client behind a deferred RESTMapper.
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	mapping, err := mapper.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	check(err, "RESTMapping of apps Deployment")
	if mapping.Resource != (schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}) || mapping.Scope.Name() != "namespace" {
		fail("Deployment maps to %v (%s)", mapping.Resource, mapping.Scope.Name())
	}
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: "cm"})
	if err != nil {
		gvr, err = mapper.ResourceFor(schema.GroupVersionResource{Resource: "configmaps"})
	}
	check(err, "ResourceFor configmaps")
	if gvr.Resource != "configmaps" || gvr.Version != "v1" {
		fail("configmaps resolve to %v", gvr)
	}
	kinds, err := mapper.KindsFor(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"})
	check(err, "KindsFor clusterroles")
	if len(kinds) == 0 || kinds[0].Kind != "ClusterRole" {
		fail("clusterroles' kinds: %v", kinds)
	}
	expander := restmapper.NewShortcutExpander(mapper, cached, nil)
	short, err := expander.ResourceFor(schema.GroupVersionResource{Resource: "deploy"})
	check(err, "the shortcut deploy")
	if short.Resource != "deployments" {
		fail("the shortcut deploy resolves to %v", short)
	}

	// OpenAPI v3: the root's paths, then apps/v1's document.
	paths, err := dc.OpenAPIV3().Paths()
	check(err, "OpenAPI v3 root")
	gv, ok := paths["apis/apps/v1"]
	if !ok || paths["api/v1"] == nil {
		keys := make([]string, 0, len(paths))
		for k := range paths {
			keys = append(keys, k)
		}
		fail("the OpenAPI v3 root lacks apis/apps/v1 or api/v1: %v", keys)
	}
	body, err := gv.Schema("application/json")
	check(err, "OpenAPI v3 apis/apps/v1")
	var spec struct {
		OpenAPI    string `json:"openapi"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	check(json.Unmarshal(body, &spec), "decode the apps/v1 OpenAPI v3 document")
	if !strings.HasPrefix(spec.OpenAPI, "3.") || spec.Components.Schemas["io.k8s.api.apps.v1.Deployment"] == nil {
		fail("the apps/v1 document: openapi %q, %d schemas", spec.OpenAPI, len(spec.Components.Schemas))
	}
	version, err := dc.ServerVersion()
	check(err, "ServerVersion")
	e.out(step, "%d groups (aggregated v2), preferred deployments in apps/v1, RESTMapper Deployment -> %v, shortcut deploy, OpenAPI v3 (%d paths, apps/v1 %s), version %s",
		len(groups), mapping.Resource, len(paths), spec.OpenAPI, fmt.Sprint(version.GitVersion))
}
