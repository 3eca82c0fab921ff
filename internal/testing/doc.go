// Package testing holds no code: its folders are the project's test support, kept apart from
// the product's packages and imported only by tests and by the developer tools under hack/
// (imports_test.go checks it).
//
//   - testbed: real clusters (kube-apiserver, etcd, kwok, the Flux controllers) for the tests,
//     the demo and the benchmarks.
//   - fakeapi: a fake Kubernetes API server for the faults a real one does not produce on
//     demand and for fleets of thousands of clusters.
//   - fakegithub: a fake GitHub REST API for the publishing tests.
//   - cloudauthtest: fakes of the clouds' token endpoints and of STS's check of EKS tokens.
//   - runnertest: reads a CI log as GitHub's runner and the Azure agent do.
package testing
