package assess

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// generatorInput is one source of a generatorFrom: its alias, kind and name (in flux-system).
type generatorInput struct{ alias, kind, name string }

// generatorFrom is ArtifactGenerator flux-system/name at generation 3, writing ExternalArtifact
// name (its revision from the source revision names, "@alias"; the digest of its content when
// "") from sources, built last from observed, with the given conditions.
func generatorFrom(name string, sources []generatorInput, revision string, observed map[string]flux.ObservedSource, conditions ...string) string {
	srcs := make([]string, 0, len(sources))
	for _, s := range sources {
		srcs = append(srcs, fmt.Sprintf("{alias: %s, kind: %s, name: %s, namespace: flux-system}", s.alias, s.kind, s.name))
	}
	doc := `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: ` + name + `, namespace: flux-system, generation: 3}
spec:
  sources: [` + strings.Join(srcs, ", ") + `]
  artifacts: [{name: ` + name + `, revision: "` + revision + `", copy: [{from: "@` + sources[0].alias + `/**", to: "@artifact/"}]}]
status:
  observedSourcesDigest: "` + flux.ObservedSourcesDigest(observed) + `"
  conditions:`
	for _, c := range conditions {
		doc += "\n  - " + c
	}
	return doc
}

// observedApp is GitRepository flux-system/app's artifact rev as a generator observes it
// (gitRepoStored).
func observedApp(rev string) flux.ObservedSource {
	return flux.ObservedSource{Digest: "sha256:" + dig1, Revision: rev, URL: "http://source-controller/gitrepository/flux-system/app/" + rev[len(rev)-12:] + ".tar.gz"}
}

// buildFailedConditions are the conditions of a generator whose build at generation 3 failed
// at 11:56 with message, retried.
func buildFailedConditions(message string) []string {
	return []string{`{type: Ready, status: "False", reason: BuildFailed, message: "` + message + `", observedGeneration: 3, lastTransitionTime: "2026-11-01T11:56:00Z"}`,
		`{type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "retrying", observedGeneration: 3}`}
}

// generatorAtWork are the conditions of a generator building at generation 3.
var generatorAtWork = []string{`{type: Ready, status: "Unknown", reason: Progressing, message: "building", observedGeneration: 3}`,
	`{type: Reconciling, status: "True", reason: Progressing, message: "building", observedGeneration: 3}`}

// TestUpstreamGeneratorsInAnyOrder: each ExternalArtifact up a chain of generators is judged
// once in a walk, and the same way whichever source leads to it first: the root's verdict
// does not depend on the order of spec.sources. Each case lists outer's sources both ways.
func TestUpstreamGeneratorsInAnyOrder(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	upRev, mRev := "latest@sha256:"+dig1, "latest@sha256:"+dig2
	stalledX := func(name string) string {
		return generatorFrom(name, []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...)
	}
	waits := outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}
	fails := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}
	type layout struct {
		name     string
		sources  []generatorInput
		revision string
		observed map[string]flux.ObservedSource
		app      string
		others   []string
		want     outcome
	}
	layouts := []layout{
		// M copies stalled X and takes its revision; W, at work on app's commit, is also a
		// source of M. outer takes w's revision: W builds the commit, and outer with it.
		{name: "a generator at work met first through a failed one: it waits",
			sources: []generatorInput{{"m", "ExternalArtifact", "m"}, {"w", "ExternalArtifact", "w"}}, revision: "@w",
			observed: map[string]flux.ObservedSource{"m": {Revision: mRev}, "w": {Revision: revOfA}}, app: gitRepoStored(revB),
			others: []string{externalArtifact("m", "flux-system", mRev), externalArtifact("w", "flux-system", revOfA), externalArtifact("x", "flux-system", upRev),
				generatorFrom("m", []generatorInput{{"x", "ExternalArtifact", "x"}, {"w", "ExternalArtifact", "w"}}, "@x",
					map[string]flux.ObservedSource{"x": {Revision: upRev}, "w": {Revision: revOfA}}, generatorReady),
				generatorFrom("w", []generatorInput{{"app", "GitRepository", "app"}}, "@app", map[string]flux.ObservedSource{"app": observedApp(revOfA)}, generatorAtWork...),
				stalledX("x")},
			want: waits},
		// M takes its revision from app, not on the commit yet, and copies stalled X; outer
		// takes X's revision: nothing will bring the commit to it.
		{name: "a failed generator excused on another's way: it fails",
			sources: []generatorInput{{"m", "ExternalArtifact", "m"}, {"x", "ExternalArtifact", "x"}}, revision: "@x",
			observed: map[string]flux.ObservedSource{"m": {Revision: revOfA}, "x": {Revision: upRev}}, app: gitRepoStored(revOfA),
			others: []string{externalArtifact("m", "flux-system", revOfA), externalArtifact("x", "flux-system", upRev),
				generatorFrom("m", []generatorInput{{"app", "GitRepository", "app"}, {"x", "ExternalArtifact", "x"}}, "@app",
					map[string]flux.ObservedSource{"app": observedApp(revOfA), "x": {Revision: upRev}}, generatorReady),
				stalledX("x")},
			want: fails},
		// Two stalled generators; outer takes the second one's revision, whose source has
		// not fetched the commit: a stalled generator brings nothing.
		{name: "two stalled generators, the revision from the second: it fails",
			sources: []generatorInput{{"x1", "ExternalArtifact", "x1"}, {"x2", "ExternalArtifact", "x2"}}, revision: "@x2",
			observed: map[string]flux.ObservedSource{"x1": {Revision: upRev}, "x2": {Revision: revOfA}}, app: gitRepoStored(revOfA),
			others: []string{externalArtifact("x1", "flux-system", upRev), externalArtifact("x2", "flux-system", revOfA), stalledX("x1"),
				generatorFrom("x2", []generatorInput{{"app", "GitRepository", "app"}}, "@app", map[string]flux.ObservedSource{"app": observedApp(revOfA)}, stalledConditions...)},
			want: fails},
	}
	var cases []fixtureCase
	for _, l := range layouts {
		for _, order := range [][]generatorInput{l.sources, {l.sources[1], l.sources[0]}} {
			outer := generatorFrom("outer", order, l.revision, l.observed, generatorReady)
			docs := append([]string{ks("app", "ExternalArtifact", "outer", "", revOfA), l.app, externalArtifact("outer", "flux-system", revOfA), outer}, l.others...)
			cases = append(cases, fixtureCase{name: fmt.Sprintf("%s (%s first)", l.name, order[0].alias),
				looks: []fixtureLook{{docs: docs, want: expected{Outcome: l.want}}}})
		}
	}
	runFixtureCases(t, cases)
}

// TestUpstreamGeneratorLoops: a generator that lists its own ExternalArtifact under several
// aliases, beside a stalled one, is judged once: the walk decides what each artifact may bring
// once, however many ways lead to it.
func TestUpstreamGeneratorLoops(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	upRev, gRev := "latest@sha256:"+dig1, "latest@sha256:"+dig2
	var sources []generatorInput
	observed := map[string]flux.ObservedSource{}
	for i := range 8 {
		alias := fmt.Sprintf("s%d", i)
		sources = append(sources, generatorInput{alias, "ExternalArtifact", "g"})
		observed[alias] = flux.ObservedSource{Revision: gRev}
	}
	docs := []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revB),
		externalArtifact("outer", "flux-system", revOfA), externalArtifact("g", "flux-system", gRev), externalArtifact("x", "flux-system", upRev),
		generatorFrom("outer", []generatorInput{{"up", "ExternalArtifact", "x"}, {"l", "ExternalArtifact", "g"}}, "",
			map[string]flux.ObservedSource{"up": {Revision: upRev}, "l": {Revision: gRev}}, generatorReady),
		generatorFrom("g", sources, "", observed, generatorReady),
		generatorFrom("x", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...)}
	runFixtureCases(t, []fixtureCase{{name: "eight aliases of its own artifact: it fails", looks: []fixtureLook{{docs: docs,
		want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}}}}})
}

// TestFailedBuildWaitsWhileASourceMayBringTheRevision: a generator whose build failed on
// sources none of which serves the expected revision builds again when one fetches it, so
// the root waits; only while one may: a source suspended, stalled or moved past it brings
// nothing. (A source of another repository, on another revision, cannot be told from one not
// yet on the commit: the root waits for it, to the deadline if it never moves.)
func TestFailedBuildWaitsWhileASourceMayBringTheRevision(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	revC := "main@sha1:cccccccccccccccccccccccccccccccccccccccc"
	other := func(spec string) string {
		return strings.Replace(strings.Replace(gitRepoStored(revC), "name: app,", "name: other,", 1), "status:", spec+"status:", 1)
	}
	buildFailed := buildFailedConditions("gen build failed: no files matched")
	gen := generatorFrom("gen", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, buildFailed...)
	docs := func(o string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revB), o, externalArtifact("outer", "flux-system", revOfA),
			externalArtifact("gen", "flux-system", ""), twoSourceGenerator(revOfA, "latest@sha256:"+dig1, "@app"), gen}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "its source may still fetch the commit: it waits", looks: []fixtureLook{{
			docs: docs(other("")), want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}}}},
		{name: "its source suspended: it fails", looks: []fixtureLook{{
			docs: docs(other("spec: {suspend: true}\n")),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"ExternalArtifact/flux-system/gen, a source of ArtifactGenerator/flux-system/outer, has no artifact: ArtifactGenerator/flux-system/gen " +
					"(which writes ExternalArtifact/flux-system/gen, no artifact yet) failed to build from its sources' current artifacts: gen build failed: no files matched; " +
					"none of its sources may still bring main@sha1:bbbbbbb"}}}}},
	})
}

// TestFailedBuildWaitsOnlyForARevisionSource: outer's build failed, and none of its sources
// serves the commit; it takes its revision from app ("@app"), suspended on A, and copies
// fleet, another repository that may still fetch. source-watcher builds again when fleet's
// artifact changes, but writes outer under app's revision, A, whatever fleet brings: only a
// source outer takes its revision from may bring the commit, as for revisionCarrier. The
// root fails; it waits while app may still fetch, and, outer's revision the digest of its
// content, while fleet may.
func TestFailedBuildWaitsOnlyForARevisionSource(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	fleet := flux.ObservedSource{Digest: "sha256:" + dig1, Revision: fleetAt, URL: "http://source-controller/gitrepository/flux-system/fleet/" + fleetAt[len(fleetAt)-12:] + ".tar.gz"}
	outer := func(revision string) string {
		return generatorFrom("outer", []generatorInput{{"app", "GitRepository", "app"}, {"fleet", "GitRepository", "fleet"}}, revision,
			map[string]flux.ObservedSource{"app": observedApp(revOfA), "fleet": fleet}, buildFailedConditions("outer build failed: no files matched @fleet/x/**")...)
	}
	repo := func(name, spec string) string {
		return strings.Replace(strings.Replace(gitRepoStored(map[string]string{"app": revOfA, "fleet": fleetAt}[name]), "name: app,", "name: "+name+",", 1), "status:", spec+"status:", 1)
	}
	docs := func(o, app string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), app, repo("fleet", ""), externalArtifact("outer", "flux-system", revOfA), o}
	}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}
	runFixtureCases(t, []fixtureCase{
		{name: "its revision from app, suspended: it fails", looks: []fixtureLook{{docs: docs(outer("@app"), repo("app", "spec: {suspend: true}\n")),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"outer build failed: no files matched @fleet/x/**; none of its sources may still bring main@sha1:bbbbbbb"}}}}},
		{name: "its revision from app, which may still fetch: it waits", looks: []fixtureLook{{docs: docs(outer("@app"), repo("app", "")),
			want: waits}}},
		{name: "its revision the digest of its content, app suspended: it waits for fleet", looks: []fixtureLook{{docs: docs(outer(""), repo("app", "spec: {suspend: true}\n")),
			want: waits}}},
	})
}

// TestFailedBuildWaitsForItsRevisionSource: outer takes its revision from app, which has not
// fetched the commit yet, and copies app2, another GitRepository of the same repository, on
// the commit already; its build of those failed (what it copies from app's new path is not in
// A). A source outer does not take its revision from serving the commit is not the build of
// the commit: app's fetch of it makes source-watcher build again, and outer serves it only
// then. The root waits while app may still fetch it, and fails once it may not (suspended).
func TestFailedBuildWaitsForItsRevisionSource(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	app2 := flux.ObservedSource{Digest: "sha256:" + dig1, Revision: revB, URL: "http://source-controller/gitrepository/flux-system/app2/" + revB[len(revB)-12:] + ".tar.gz"}
	outer := generatorFrom("outer", []generatorInput{{"app", "GitRepository", "app"}, {"app2", "GitRepository", "app2"}}, "@app",
		map[string]flux.ObservedSource{"app": observedApp(revOfA), "app2": app2}, buildFailedConditions("outer build failed: no files matched @app/new/**")...)
	app2Repo := strings.Replace(gitRepoStored(revB), "name: app,", "name: app2,", 1)
	docs := func(app string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), app, app2Repo, externalArtifact("outer", "flux-system", revOfA), outer}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "app may still fetch the commit: it waits", looks: []fixtureLook{{docs: docs(gitRepoStored(revOfA)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
				Says: []string{"GitRepository/flux-system/app may still bring main@sha1:bbbbbbb, and ArtifactGenerator/flux-system/outer builds again then"}}}}},
		{name: "app suspended: it fails", looks: []fixtureLook{{docs: docs(strings.Replace(gitRepoStored(revOfA), "status:", "spec: {suspend: true}\nstatus:", 1)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"none of its sources may still bring main@sha1:bbbbbbb"}}}}},
	})
}

// TestFailedBuildWaitsForAnUpstreamAtWork: U2 failed to build what it copies from u1 (no files
// matched), and U1, which writes u1, is at work on the commit: U2 builds again when u1
// changes, and the root, on outer, which takes u2's revision, waits, in either order of
// outer's sources. A generator stalled for its spec does not build again: it fails.
func TestFailedBuildWaitsForAnUpstreamAtWork(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	u1 := generatorFrom("u1", []generatorInput{{"app", "GitRepository", "app"}}, "@app", map[string]flux.ObservedSource{"app": observedApp(revOfA)}, generatorAtWork...)
	u2 := func(conditions ...string) string {
		return generatorFrom("u2", []generatorInput{{"u1", "ExternalArtifact", "u1"}, {"app", "GitRepository", "app"}}, "@app",
			map[string]flux.ObservedSource{"app": observedApp(revOfA), "u1": {Revision: revOfA}}, conditions...)
	}
	buildFailed := buildFailedConditions("u2 build failed: no files matched @u1/extra/**")
	observed := map[string]flux.ObservedSource{"u1": {Revision: revOfA}, "u2": {Revision: revOfA}}
	docs := func(order []generatorInput, gen string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revB),
			externalArtifact("outer", "flux-system", revOfA), externalArtifact("u1", "flux-system", revOfA), externalArtifact("u2", "flux-system", revOfA),
			generatorFrom("outer", order, "@u2", observed, generatorReady), u1, gen}
	}
	u1First := []generatorInput{{"u1", "ExternalArtifact", "u1"}, {"u2", "ExternalArtifact", "u2"}}
	u2First := []generatorInput{u1First[1], u1First[0]}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
		Says: []string{"ExternalArtifact/flux-system/u1, a source of ArtifactGenerator/flux-system/u2, may change", "and ArtifactGenerator/flux-system/u2 builds again then, though"}}
	fails := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}
	runFixtureCases(t, []fixtureCase{
		{name: "its failed build, u1 first: it waits", looks: []fixtureLook{{docs: docs(u1First, u2(buildFailed...)), want: expected{Outcome: waits.Outcome}}}},
		{name: "its failed build, u2 first: it waits", looks: []fixtureLook{{docs: docs(u2First, u2(buildFailed...)), want: waits}}},
		{name: "stalled for its spec: it fails", looks: []fixtureLook{{docs: docs(u1First, u2(stalledConditions...)), want: fails}}},
	})
}

// failedOnUp are the conditions of outer (twoSourceGenerator) whose build of its sources'
// current artifacts failed on what it copies from gen (alias up), retried.
var failedOnUp = strings.Join(buildFailedConditions("outer build failed: no files matched @up/extra/**"), "\n  - ")

// TestFailedBuildWaitsOnlyForAnUpstreamThatMayChange: outer's build failed on what it copies
// from ExternalArtifact gen; it builds again when gen changes, so the root waits while gen may
// change: its generator at work, or stalled with a fix on its way (its applier at work). A
// generator not found, or one waiting for a source not found, brings no change: it fails.
func TestFailedBuildWaitsOnlyForAnUpstreamThatMayChange(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	const kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	upRev := "latest@sha256:" + dig1
	outer := strings.Replace(twoSourceGenerator(revOfA, upRev, "@app"), generatorReady, failedOnUp, 1)
	stalledGen := ownedBy(strings.Replace(artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...),
		"name: app, namespace: flux-system}]", "name: fleet, namespace: flux-system}]", 1), kustomizeGroup, "flux-system", "infra")
	fleetRepo := strings.Replace(gitRepoStored(fleetAt), "name: app,", "name: fleet,", 1)
	docs := func(app string, more ...string) []string {
		return append([]string{ks("app", "ExternalArtifact", "outer", "", revOfA), app, externalArtifact("outer", "flux-system", revOfA),
			externalArtifact("gen", "flux-system", upRev), outer}, more...)
	}
	withoutSource := generatorFrom("gen", []generatorInput{{"o", "GitRepository", "gone"}}, "", map[string]flux.ObservedSource{},
		`{type: Ready, status: "False", reason: SourceFetchFailed, message: "get sources failed: GitRepository/flux-system/gone not found", observedGeneration: 3}`)
	suspendedApp := strings.Replace(gitRepoStored(revOfA), "status:", "spec: {suspend: true}\nstatus:", 1)
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}
	fails := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}
	later := fixtureNow.Add(30 * time.Minute)
	runFixtureCases(t, []fixtureCase{
		{name: "gen's generator stalled, its applier at work: it waits", looks: []fixtureLook{{
			docs: docs(gitRepoStored(revB), stalledGen, atWorkOnFleet("infra"), ks("apps", "GitRepository", "fleet", "", fleetAt), fleetRepo),
			want: expected{Outcome: waits.Outcome, Says: []string{"ExternalArtifact/flux-system/gen, a source of ArtifactGenerator/flux-system/outer, may change", "the fix may be on its way: Kustomization/flux-system/infra"}}}}},
		{name: "gen's generator stalled, its applier suspended: it fails", looks: []fixtureLook{{
			docs: docs(gitRepoStored(revB), stalledGen, ks("infra", "GitRepository", "fleet", ", suspend: true", "main@sha1:fffffffffffffffffffffffffffffffffffffff0"), fleetRepo),
			want: fails}}},
		{name: "gen's generator not found: it fails", looks: []fixtureLook{{docs: docs(gitRepoStored(revB)), want: fails}, {at: later, docs: docs(gitRepoStored(revB)), want: fails}}},
		{name: "gen's generator waits for a source not found: it fails", looks: []fixtureLook{
			{docs: docs(gitRepoStored(revB), withoutSource), want: fails}, {at: later, docs: docs(gitRepoStored(revB), withoutSource), want: fails}}},
		{name: "no source may bring the commit, gen's generator not found: it fails", looks: []fixtureLook{{at: later, docs: docs(suspendedApp), want: fails}}},
	})
}

// TestGeneratorOfItsOwnArtifact: X lists its own ExternalArtifact beside GitRepository app,
// which has not fetched the commit yet; its build failed, and it builds again when app does.
// outer takes x's revision and copies a stalled generator's artifact: the root waits, in
// either order of X's sources (the loop through x is cut once, and decides nothing for good).
func TestGeneratorOfItsOwnArtifact(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	upRev := "latest@sha256:" + dig1
	buildFailed := buildFailedConditions("x build failed: no files matched")
	outer := generatorFrom("outer", []generatorInput{{"x", "ExternalArtifact", "x"}, {"s", "ExternalArtifact", "s"}}, "@x",
		map[string]flux.ObservedSource{"x": {Revision: revOfA}, "s": {Revision: upRev}}, generatorReady)
	docs := func(order []generatorInput) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revOfA),
			externalArtifact("outer", "flux-system", revOfA), externalArtifact("x", "flux-system", revOfA), externalArtifact("s", "flux-system", upRev), outer,
			generatorFrom("s", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...),
			generatorFrom("x", order, "@app", map[string]flux.ObservedSource{}, buildFailed...)}
	}
	self, app := generatorInput{"x", "ExternalArtifact", "x"}, generatorInput{"app", "GitRepository", "app"}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}
	runFixtureCases(t, []fixtureCase{
		{name: "app first: it waits", looks: []fixtureLook{{docs: docs([]generatorInput{app, self}), want: waits}}},
		{name: "its own artifact first: it waits", looks: []fixtureLook{{docs: docs([]generatorInput{self, app}), want: waits}}},
	})
}

// TestTwoFailedUpstreamsInAnyOrder: outer takes its revision from f2 and copies f1, both
// stalled for their spec. Nothing applies F1; F2's applier is at work, and may bring its fix:
// F2 then builds, f2 brings the revision, and outer builds again on f1's last artifact. The
// root waits for F2's fix, in either order of outer's sources.
func TestTwoFailedUpstreamsInAnyOrder(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	upRev := "latest@sha256:" + dig1
	f1 := generatorFrom("f1", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...)
	f2 := ownedBy(generatorFrom("f2", []generatorInput{{"app", "GitRepository", "app"}}, "@app", map[string]flux.ObservedSource{}, stalledConditions...),
		"kustomize.toolkit.fluxcd.io", "flux-system", "infra")
	docs := func(order []generatorInput) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revB), externalArtifact("outer", "flux-system", revOfA),
			externalArtifact("f1", "flux-system", upRev), externalArtifact("f2", "flux-system", revOfA),
			generatorFrom("outer", order, "@f2", map[string]flux.ObservedSource{"f1": {Revision: upRev}, "f2": {Revision: revOfA}}, generatorReady), f1, f2,
			atWorkOnFleet("infra"), strings.Replace(gitRepoStored(fleetAt), "name: app,", "name: fleet,", 1)}
	}
	i1, i2 := generatorInput{"f1", "ExternalArtifact", "f1"}, generatorInput{"f2", "ExternalArtifact", "f2"}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}, Says: []string{"the fix may be on its way: Kustomization/flux-system/infra"}}
	runFixtureCases(t, []fixtureCase{
		{name: "f2 first: it waits", looks: []fixtureLook{{docs: docs([]generatorInput{i2, i1}), want: waits}}},
		{name: "f1 first: it waits", looks: []fixtureLook{{docs: docs([]generatorInput{i1, i2}), want: waits}}},
	})
}

// TestWithoutArtifactUpstreamWithNoFixInAnyOrder: outer waits for two ExternalArtifacts with no
// artifact yet, u1 and u2, each of a stalled generator; U1's applier (infra) is at work (a fix
// may be on its way), nothing applies U2. source-watcher builds outer only once every source
// has an artifact (observeSources), and u2 never gets one: the root fails, whichever of the
// two outer lists first.
func TestWithoutArtifactUpstreamWithNoFixInAnyOrder(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	u1 := ownedBy(generatorFrom("u1", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...),
		"kustomize.toolkit.fluxcd.io", "flux-system", "infra")
	u2 := generatorFrom("u2", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...)
	notReady := `{type: Ready, status: "False", reason: SourceFetchFailed, message: "get sources failed: source 'ExternalArtifact/flux-system/u1' is not ready", observedGeneration: 3}`
	outer := func(order ...generatorInput) string {
		return generatorFrom("outer", append([]generatorInput{{"app", "GitRepository", "app"}}, order...), "@app", map[string]flux.ObservedSource{"app": observedApp(revOfA)}, notReady)
	}
	fleet := strings.Replace(gitRepoStored(fleetAt), "name: app,", "name: fleet,", 1)
	docs := func(o string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revB), externalArtifact("outer", "flux-system", revOfA),
			externalArtifact("u1", "flux-system", ""), externalArtifact("u2", "flux-system", ""), o, u1, u2, atWorkOnFleet("infra"), fleet}
	}
	i1, i2 := generatorInput{"u1", "ExternalArtifact", "u1"}, generatorInput{"u2", "ExternalArtifact", "u2"}
	fails := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
		Says: []string{"ExternalArtifact/flux-system/u2, a source of ArtifactGenerator/flux-system/outer, has no artifact: ArtifactGenerator/flux-system/u2"}}
	runFixtureCases(t, []fixtureCase{
		{name: "u2 first: it fails", looks: []fixtureLook{{docs: docs(outer(i2, i1)), want: fails}}},
		{name: "u1 first: it fails", looks: []fixtureLook{{docs: docs(outer(i1, i2)), want: fails}}},
	})
}

// TestNestedTwoFailedUpstreamsNoFixInAnyOrder: a nested Kustomization on ExternalArtifact outer,
// Current on f1 and f2 (its revision the digest of its content: both carry it), each of a
// stalled generator; F1's applier (infra) is at work, nothing applies F2. outer's content stays
// behind f2 whatever comes of F1's fix: the nested object fails, whichever of the two outer
// lists first.
func TestNestedTwoFailedUpstreamsNoFixInAnyOrder(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	latest := "latest@sha256:" + dig1
	f1 := ownedBy(generatorFrom("f1", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...),
		"kustomize.toolkit.fluxcd.io", "flux-system", "infra")
	f2 := generatorFrom("f2", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...)
	outer := func(order ...generatorInput) string {
		return generatorFrom("outer", order, "", map[string]flux.ObservedSource{"f1": {Revision: revOfA}, "f2": {Revision: revOfA}}, generatorReady)
	}
	fleet := strings.Replace(gitRepoStored(fleetAt), "name: app,", "name: fleet,", 1)
	docs := func(o string) []string {
		return []string{ks("app", "GitRepository", "app", "", revB, "flux-system_outer_kustomize.toolkit.fluxcd.io_Kustomization"), gitRepoStored(revB),
			ks("outer", "ExternalArtifact", "outer", "", latest), externalArtifact("outer", "flux-system", latest),
			externalArtifact("f1", "flux-system", revOfA), externalArtifact("f2", "flux-system", revOfA), o, f1, f2, atWorkOnFleet("infra"), fleet}
	}
	i1, i2 := generatorInput{"f1", "ExternalArtifact", "f1"}, generatorInput{"f2", "ExternalArtifact", "f2"}
	fails := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
		Says: []string{"ExternalArtifact/flux-system/f2, a source of ArtifactGenerator/flux-system/outer: ArtifactGenerator/flux-system/f2"}}
	runFixtureCases(t, []fixtureCase{
		{name: "f2 first: it fails", looks: []fixtureLook{{docs: docs(outer(i2, i1)), want: fails}}},
		{name: "f1 first: it fails", looks: []fixtureLook{{docs: docs(outer(i1, i2)), want: fails}}},
	})
}

// TestSourceMovedPastFromTheFirstLook: the run first sees GitRepository app on A, its
// generator built from it; then app moves to C, pushed after the expected commit B (Flux
// fetches the newest revision only), and the generator fails to build C. app moved past B,
// from the first look on, and brings nothing more: the root fails.
func TestSourceMovedPastFromTheFirstLook(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	revC := "main@sha1:cccccccccccccccccccccccccccccccccccccccc"
	buildFailed := buildFailedConditions("x build failed: no files matched")
	x := func(conditions ...string) string {
		return generatorFrom("x", []generatorInput{{"app", "GitRepository", "app"}}, "@app", map[string]flux.ObservedSource{"app": observedApp(revOfA)}, conditions...)
	}
	docs := func(app, gen string) []string {
		return []string{ks("app", "ExternalArtifact", "x", "", revOfA), app, externalArtifact("x", "flux-system", revOfA), gen}
	}
	fails := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}, Says: []string{"none of its sources may still bring main@sha1:bbbbbbb"}}
	runFixtureCases(t, []fixtureCase{
		{name: "failed on A, not moved: it waits, naming the source that may bring the commit", looks: []fixtureLook{{
			docs: docs(gitRepoStored(revOfA), x(buildFailed...)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
				Says: []string{"GitRepository/flux-system/app may still bring main@sha1:bbbbbbb, and ArtifactGenerator/flux-system/x builds again then"}}}}},
		{name: "on A, then moved to C, failed on C: it fails", looks: []fixtureLook{
			{docs: docs(gitRepoStored(revOfA), x(generatorReady)), want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}},
			{at: fixtureNow.Add(time.Minute), docs: docs(gitRepoStored(revC), x(buildFailed...)), want: fails},
		}},
	})
}

// buildFailedOnMid are the conditions of g3, whose build of its sources' current artifacts
// failed on what it copies from mid, retried.
var buildFailedOnMid = buildFailedConditions("g3 build failed: no files matched @mid/extra/**")

// g3OnMid is ArtifactGenerator g3, built from GitRepository app (on the expected commit) and
// ExternalArtifact mid (at midRev), its build of them failed (buildFailedOnMid).
func g3OnMid(midRev string) string {
	return generatorFrom("g3", []generatorInput{{"app", "GitRepository", "app"}, {"mid", "ExternalArtifact", "mid"}}, "@app",
		map[string]flux.ObservedSource{"app": observedApp(revB), "mid": {Revision: midRev}}, buildFailedOnMid...)
}

// TestWaitingUpstreamInAnyOrder: MID, Current, builds from u1, whose generator is not found,
// and u2, whose generator is at work. u2 changes, MID builds again, and mid changes: g3, whose
// build failed on what it copies from mid, builds again then. The root waits, whichever of
// u1 and u2 MID lists first.
func TestWaitingUpstreamInAnyOrder(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	midRev, uRev := "latest@sha256:"+dig1, "latest@sha256:"+dig2
	docs := func(order []generatorInput) []string {
		return []string{ks("app", "ExternalArtifact", "g3", "", revOfA), gitRepoStored(revB),
			externalArtifact("g3", "flux-system", revOfA), externalArtifact("mid", "flux-system", midRev),
			externalArtifact("u1", "flux-system", uRev), externalArtifact("u2", "flux-system", uRev), g3OnMid(midRev),
			generatorFrom("mid", order, "", map[string]flux.ObservedSource{"u1": {Revision: uRev}, "u2": {Revision: uRev}}, generatorReady),
			generatorFrom("u2", []generatorInput{{"app", "GitRepository", "app"}}, "", map[string]flux.ObservedSource{}, generatorAtWork...)}
	}
	i1, i2 := generatorInput{"u1", "ExternalArtifact", "u1"}, generatorInput{"u2", "ExternalArtifact", "u2"}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}
	runFixtureCases(t, []fixtureCase{
		{name: "u2, at work, first: it waits", looks: []fixtureLook{{docs: docs([]generatorInput{i2, i1}), want: waits}}},
		{name: "u1, its generator not found, first: it waits", looks: []fixtureLook{{docs: docs([]generatorInput{i1, i2}), want: waits}}},
	})
}

// TestDisabledGeneratorPassesNoChangeOn: MID is Current on up's artifact, and UP, which
// writes up, is at work. g3's build failed on what it copies from mid. An enabled MID builds
// again when up changes, and the root waits; a MID whose reconciliation is disabled, or that
// is stalled for its spec, builds nothing more, and the root fails.
func TestDisabledGeneratorPassesNoChangeOn(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	midRev, upRev := "latest@sha256:"+dig1, "latest@sha256:"+dig2
	mid := func(conditions ...string) string {
		return generatorFrom("mid", []generatorInput{{"up", "ExternalArtifact", "up"}}, "", map[string]flux.ObservedSource{"up": {Revision: upRev}}, conditions...)
	}
	docs := func(mid string) []string {
		return []string{ks("app", "ExternalArtifact", "g3", "", revOfA), gitRepoStored(revB),
			externalArtifact("g3", "flux-system", revOfA), externalArtifact("mid", "flux-system", midRev), externalArtifact("up", "flux-system", upRev),
			g3OnMid(midRev), mid, generatorFrom("up", []generatorInput{{"app", "GitRepository", "app"}}, "", map[string]flux.ObservedSource{}, generatorAtWork...)}
	}
	fails := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}
	runFixtureCases(t, []fixtureCase{
		{name: "MID enabled: it waits", looks: []fixtureLook{{docs: docs(mid(generatorReady)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}}}},
		{name: "MID disabled: it fails", looks: []fixtureLook{{docs: docs(disabledGenerator(mid(generatorReady))), want: fails}}},
		{name: "MID stalled for its spec: it fails", looks: []fixtureLook{{docs: docs(mid(stalledConditions...)), want: fails}}},
	})
}

// TestDisabledGeneratorPassesNoFixOn: as TestDisabledGeneratorPassesNoChangeOn, MID's
// upstream generator stalled, with its fix on its way (its applier at work): an enabled MID
// builds again once the fix lands, and the root waits; a disabled one builds nothing, and the
// root fails.
func TestDisabledGeneratorPassesNoFixOn(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	midRev := "latest@sha256:" + dig1
	inner := ownedBy(artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...), "kustomize.toolkit.fluxcd.io", "flux-system", "infra")
	mid := generatorFrom("mid", []generatorInput{{"up", "ExternalArtifact", "gen"}}, "", map[string]flux.ObservedSource{"up": {Revision: revOfA}}, generatorReady)
	docs := func(mid string) []string {
		return []string{ks("app", "ExternalArtifact", "g3", "", revOfA), gitRepoStored(revB),
			externalArtifact("g3", "flux-system", revOfA), externalArtifact("mid", "flux-system", midRev), externalArtifact("gen", "flux-system", revOfA),
			g3OnMid(midRev), mid, inner, atWorkOnFleet("infra"), strings.Replace(gitRepoStored(fleetAt), "name: app,", "name: fleet,", 1)}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "MID enabled: it waits", looks: []fixtureLook{{docs: docs(mid),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}}}},
		{name: "MID disabled: it fails", looks: []fixtureLook{{docs: docs(disabledGenerator(mid)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}}}},
	})
}

// TestStalledChartWithoutArtifactMayStillCome: outer's build failed on what it copies from
// gen, whose generator has not built yet: its source, HelmChart web, has no artifact, stalled
// on a version its HelmRepository's index did not list. source-controller builds the chart
// again from the index's next fetch: while the index has not been fetched since the stall,
// gen may still change, and the root waits; once it has, the chart is stalled for good, and
// the root fails.
func TestStalledChartWithoutArtifactMayStillCome(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	upRev := "latest@sha256:" + dig1
	stamp := func(t time.Time) string { return t.Format(time.RFC3339) }
	stalledAt := fixtureNow.Add(-time.Minute)
	refused := "invalid chart reference: no 'web' chart with version matching '1.1.0' found"
	repo := func(fetched time.Time) string {
		return `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system, generation: 1}
spec: {url: "https://charts.example.com", interval: 5m}
status:
  observedGeneration: 1
  artifact: {revision: "sha256:` + dig1 + `", lastUpdateTime: "` + stamp(fetched) + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded, observedGeneration: 1, lastTransitionTime: "` + stamp(fetched) + `"}]`
	}
	chart := `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: web, namespace: flux-system, generation: 2}
spec: {chart: web, version: 1.1.0, interval: 5m, sourceRef: {kind: HelmRepository, name: charts}}
status:
  observedGeneration: 2
  observedSourceArtifactRevision: "sha256:` + dig1 + `"
  conditions:
  - {type: Stalled, status: "True", reason: InvalidChartReference, message: "` + refused + `", observedGeneration: 2, lastTransitionTime: "` + stamp(stalledAt) + `"}
  - {type: Ready, status: "False", reason: InvalidChartReference, message: "` + refused + `", observedGeneration: 2, lastTransitionTime: "` + stamp(stalledAt) + `"}`
	gen := generatorFrom("gen", []generatorInput{{"c", "HelmChart", "web"}}, "", map[string]flux.ObservedSource{},
		`{type: Ready, status: "False", reason: SourceFetchFailed, message: "HelmChart/flux-system/web has no artifact", observedGeneration: 3}`)
	docs := func(repo string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revOfA), gitRepoStored(revB), externalArtifact("outer", "flux-system", revOfA),
			externalArtifact("gen", "flux-system", upRev), strings.Replace(twoSourceGenerator(revOfA, upRev, "@app"), generatorReady, failedOnUp, 1), gen, chart, repo}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "the index not fetched since the stall: it waits", looks: []fixtureLook{{docs: docs(repo(fixtureNow.Add(-time.Hour))),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}}}},
		{name: "the index fetched since: it fails", looks: []fixtureLook{{at: fixtureNow.Add(30 * time.Minute), docs: docs(repo(fixtureNow.Add(10 * time.Minute))),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}}}},
	})
}

// TestLoopBelowALadder: X, whose build failed, copies from a ladder of generators (layer i:
// a<i> and b<i>, each Current on a<i+1> and b<i+1>) whose last layer copies X's own artifact,
// or each its own. Whether the ladder may bring the revision is decided once per artifact,
// whether the loop stays cut (through X) or closes within the ladder, not once per way down
// it (2^16 ways here): the root fails.
func TestLoopBelowALadder(t *testing.T) {
	t.Parallel()
	for _, bottom := range []string{"x", "its own"} {
		t.Run("a loop to "+bottom, func(t *testing.T) {
			t.Parallel()
			ladderWithLoop(t, bottom == "x")
		})
	}
}

// ladderWithLoop runs TestLoopBelowALadder's ladder, its last layer copying X's artifact
// (toX) or each its own.
func ladderWithLoop(t *testing.T, toX bool) {
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	rev := "latest@sha256:" + dig1
	buildFailed := buildFailedConditions("x build failed: no files matched")
	both := map[string]flux.ObservedSource{"a": {Revision: rev}, "b": {Revision: rev}}
	docs := []string{ks("app", "ExternalArtifact", "x", "", revOfA), externalArtifact("x", "flux-system", rev),
		generatorFrom("x", []generatorInput{{"a", "ExternalArtifact", "a1"}, {"b", "ExternalArtifact", "b1"}}, "", both, buildFailed...)}
	const depth = 16
	for i := 1; i <= depth; i++ {
		for _, n := range []string{fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)} {
			docs = append(docs, externalArtifact(n, "flux-system", rev))
			if i == depth {
				loop := "x"
				if !toX {
					loop = n
				}
				docs = append(docs, generatorFrom(n, []generatorInput{{"x", "ExternalArtifact", loop}}, "", map[string]flux.ObservedSource{"x": {Revision: rev}}, generatorReady))
				continue
			}
			docs = append(docs, generatorFrom(n, []generatorInput{{"a", "ExternalArtifact", fmt.Sprintf("a%d", i+1)}, {"b", "ExternalArtifact", fmt.Sprintf("b%d", i+1)}}, "", both, generatorReady))
		}
	}
	runFixtureCases(t, []fixtureCase{{name: "sixteen layers: it fails", looks: []fixtureLook{{docs: docs,
		want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}}}}})
}

// TestRootOnTheRevisionChainNotBuilt: the root applied the expected commit from
// ExternalArtifact outer, which takes its revision from app (on the commit) and copies x, the
// artifact of X, built from app too. While X has not built the commit (at work), or cannot
// (stalled for its spec), what the root applied under the commit holds x's older part: when X
// builds, source-watcher builds outer again under the same revision, and kustomize-controller
// (SourceRevisionChangePredicate: HasRevision) does not requeue on it. The root is judged
// down the chain as a nested object's source is (producerWait, no revision): it waits, or
// fails. Current once X built the commit; and Current when app moved past the commit (outer's
// next build is of another revision, which kustomize-controller applies on its own).
func TestRootOnTheRevisionChainNotBuilt(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	const commitC = "c1c2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA, revOfC := "main@sha1:"+commitA, "main@sha1:"+commitC
	xRev := "latest@sha256:" + dig1
	outer := generatorFrom("outer", []generatorInput{{"app", "GitRepository", "app"}, {"x", "ExternalArtifact", "x"}}, "@app",
		map[string]flux.ObservedSource{"app": observedApp(revB), "x": {Revision: xRev}}, generatorReady)
	x := func(built string, conditions ...string) string {
		return generatorFrom("x", []generatorInput{{"app", "GitRepository", "app"}}, "", map[string]flux.ObservedSource{"app": observedApp(built)}, conditions...)
	}
	docs := func(app, xg string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", revB), app, externalArtifact("outer", "flux-system", revB),
			externalArtifact("x", "flux-system", xRev), outer, xg}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "X built the commit: current", looks: []fixtureLook{{docs: docs(gitRepoStored(revB), x(revB, generatorReady)),
			want: expected{Outcome: outcome{Verdict: result.VerdictCurrent}}}}},
		{name: "X at work on the commit: it waits", looks: []fixtureLook{{docs: docs(gitRepoStored(revB), x(revOfA, generatorAtWork...)),
			want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
				Says: []string{"ExternalArtifact/flux-system/outer serves main@sha1:bbbbbbb, which it applied, but ExternalArtifact/flux-system/x, a source of ArtifactGenerator/flux-system/outer: waiting for ArtifactGenerator/flux-system/x"}}}}},
		{name: "X stalled for its spec: it fails", looks: []fixtureLook{{docs: docs(gitRepoStored(revB), x(revOfA, stalledConditions...)),
			want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"},
				Says: []string{"ArtifactGenerator/flux-system/x (which writes ExternalArtifact/flux-system/x, artifact latest@sha256:111111111111) stalled: invalid path pattern",
					"built again, ExternalArtifact/flux-system/outer keeps its revision, and kustomize-controller applies it only at its interval"}}}}},
		{name: "app moved past the commit: current", looks: []fixtureLook{{docs: docs(gitRepoStored(revOfC), x(revOfA, stalledConditions...)),
			want: expected{Outcome: outcome{Verdict: result.VerdictCurrent}}}}},
	})
}

// TestProvisionalNoReusedAsACut: a "brings nothing" decided under a loop cut is provisional
// (chainWalk.provisional), and what is decided from it is provisional too. GA (a) builds from
// b, c and app (its revision the digest of its content: each carries it), GB (b) from a, GC
// (c) from b: a loop a -> b -> a, c hanging off it, and app, not on the commit yet (it may
// still fetch it), its way out. YY's build failed and asks first whether a may bring the
// commit: within, b's "no" is provisional, and c, decided next from it, must not be kept for
// good; a then brings the commit through app. outer takes c's revision and copies x, of a
// stalled generator: c may still bring the commit (source-watcher builds outer again when it
// does), so the root waits, whichever order GA lists its sources in.
func TestProvisionalNoReusedAsACut(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	aRev, bRev, cRev := "latest@sha256:"+dig1, "latest@sha256:"+dig2, "latest@sha256:3333333333333333333333333333333333333333333333333333333333333333"
	xRev := "latest@sha256:4444444444444444444444444444444444444444444444444444444444444444"
	ga := func(order ...generatorInput) string {
		return generatorFrom("a", order, "", map[string]flux.ObservedSource{"b": {Revision: bRev}, "c": {Revision: cRev}, "app": observedApp(revOfA)}, generatorReady)
	}
	gb := generatorFrom("b", []generatorInput{{"a", "ExternalArtifact", "a"}}, "", map[string]flux.ObservedSource{"a": {Revision: aRev}}, generatorReady)
	gc := generatorFrom("c", []generatorInput{{"b", "ExternalArtifact", "b"}}, "", map[string]flux.ObservedSource{"b": {Revision: bRev}}, generatorReady)
	yy := generatorFrom("yy", []generatorInput{{"a", "ExternalArtifact", "a"}}, "@a", map[string]flux.ObservedSource{"a": {Revision: aRev}},
		buildFailedConditions("yy build failed: no files matched @a/extra/**")...)
	x := generatorFrom("x", []generatorInput{{"o", "GitRepository", "other"}}, "", map[string]flux.ObservedSource{}, stalledConditions...)
	outer := generatorFrom("outer", []generatorInput{{"yy", "ExternalArtifact", "yy"}, {"x", "ExternalArtifact", "x"}, {"c", "ExternalArtifact", "c"}}, "@c",
		map[string]flux.ObservedSource{"yy": {Revision: aRev}, "x": {Revision: xRev}, "c": {Revision: cRev}}, generatorReady)
	docs := func(gaDoc string) []string {
		return []string{ks("app", "ExternalArtifact", "outer", "", cRev), gitRepoStored(revOfA), externalArtifact("outer", "flux-system", cRev),
			externalArtifact("a", "flux-system", aRev), externalArtifact("b", "flux-system", bRev), externalArtifact("c", "flux-system", cRev),
			externalArtifact("yy", "flux-system", aRev), externalArtifact("x", "flux-system", xRev), gaDoc, gb, gc, yy, x, outer}
	}
	ib, ic, iapp := generatorInput{"b", "ExternalArtifact", "b"}, generatorInput{"c", "ExternalArtifact", "c"}, generatorInput{"app", "GitRepository", "app"}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"},
		Says: []string{"ExternalArtifact/flux-system/c, which ExternalArtifact/flux-system/outer takes its revision from, may still bring main@sha1:bbbbbbb"}}
	runFixtureCases(t, []fixtureCase{
		{name: "GA's sources app, b, c: it waits", looks: []fixtureLook{{docs: docs(ga(iapp, ib, ic)), want: waits}}},
		{name: "GA's sources b, c, app: it waits", looks: []fixtureLook{{docs: docs(ga(ib, ic, iapp)), want: waits}}},
	})
}

// TestMidGeneratorApplierWeighed: the root applies ExternalArtifact outer, whose generator
// copies mid, whose generator copies gen, of a generator stalled for its spec that nothing
// applies. A fix may reach the failure through any generator of the chain from the failing one
// down to the root's own: a change to mid's spec, which its applier (infra) is about to apply,
// may leave gen out, and source-watcher builds outer again on mid's new artifact. The root
// waits while infra is at work, and fails once it is done, as it does for outer's own applier
// at work with two levels.
func TestMidGeneratorApplierWeighed(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	const kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	latest := "latest@sha256:" + dig1
	midRev := "latest@sha256:" + dig2
	gen := artifactGenerator("gen", "flux-system", digestOf(revOfA), stalledConditions...)
	fleet := strings.Replace(gitRepoStored(fleetAt), "name: app,", "name: fleet,", 1)
	twoLevels := func(apps string) []string {
		outer := ownedBy(generatorFrom("outer", []generatorInput{{"up", "ExternalArtifact", "gen"}}, "", map[string]flux.ObservedSource{"up": {Revision: revOfA}}, generatorReady),
			kustomizeGroup, "flux-system", "apps")
		return []string{ks("app", "ExternalArtifact", "outer", "", latest), gitRepoStored(revB), externalArtifact("outer", "flux-system", latest),
			externalArtifact("gen", "flux-system", revOfA), outer, gen, apps, fleet}
	}
	threeLevels := func(infra string) []string {
		outer := ownedBy(generatorFrom("outer", []generatorInput{{"up", "ExternalArtifact", "mid"}}, "", map[string]flux.ObservedSource{"up": {Revision: midRev}}, generatorReady),
			kustomizeGroup, "flux-system", "apps")
		mid := ownedBy(generatorFrom("mid", []generatorInput{{"up", "ExternalArtifact", "gen"}}, "", map[string]flux.ObservedSource{"up": {Revision: revOfA}}, generatorReady),
			kustomizeGroup, "flux-system", "infra")
		return []string{ks("app", "ExternalArtifact", "outer", "", latest), gitRepoStored(revB), externalArtifact("outer", "flux-system", latest),
			externalArtifact("mid", "flux-system", midRev), externalArtifact("gen", "flux-system", revOfA), outer, mid, gen,
			ks("apps", "GitRepository", "fleet", "", fleetAt), infra, fleet}
	}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}}
	fails := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}}
	runFixtureCases(t, []fixtureCase{
		{name: "two levels, outer's applier at work: it waits", looks: []fixtureLook{{docs: twoLevels(atWorkOnFleet("apps")), want: waits}}},
		{name: "three levels, mid's applier done: it fails", looks: []fixtureLook{{docs: threeLevels(ks("infra", "GitRepository", "fleet", "", fleetAt)), want: fails}}},
		{name: "three levels, mid's applier at work: it waits", looks: []fixtureLook{{docs: threeLevels(atWorkOnFleet("infra")),
			want: expected{Outcome: waits.Outcome, Says: []string{"the fix may be on its way: Kustomization/flux-system/infra, which applies ArtifactGenerator/flux-system/mid"}}}}},
	})
}
