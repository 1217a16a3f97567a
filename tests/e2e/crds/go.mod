module ray-webhook/tests/e2e/crds

go 1.26.0

// Data only: cert-manager's CustomResourceDefinitions (deploy/crds in the
// module), so that the cert-manager overlay of deploy/ can be checked with
// `kubectl apply --dry-run=server` (its Issuer and Certificate objects need the
// kinds). Nothing here is compiled and nothing imports cert-manager, so this
// go.mod is not tidied (`go mod tidy` would drop the requirement); go.sum holds
// the module's hashes and scripts/e2e.sh fetches it with
//   go mod download -json github.com/cert-manager/cert-manager
require github.com/cert-manager/cert-manager v1.21.2
