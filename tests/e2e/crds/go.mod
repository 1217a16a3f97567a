module ray-webhook/tests/e2e/crds

go 1.26.0

// Data only: cert-manager's CustomResourceDefinitions (deploy/crds in the
// module), so that the cert-manager overlay of deploy/ can be checked with
// `kubectl apply --dry-run=server` (its Issuer and Certificate objects need the
// kinds), and the Open Reports API's (config/crd), where the periodic audit
// writes its policy reports. Nothing here is compiled and nothing imports
// either, so this go.mod is not tidied (`go mod tidy` would drop the
// requirements); go.sum holds the modules' hashes and the framework fetches
// each with `go mod download MODULE`.
require (
	github.com/cert-manager/cert-manager v1.21.2
	github.com/openreports/reports-api v0.2.1
)
