// The null webhook of bench/apiserver.sh: allows every AdmissionReview. It
// changes nothing, or, when nginx.conf sets $review_patch (base64 of a JSON
// Patch), answers that same patch to every review: what the API server pays to
// apply a mutation, with no webhook work behind it. kube-apiserver refuses an
// answer whose response.uid is not the request's (k8s.io/apiserver
// pkg/admission/plugin/webhook/request/admissionreview.go,
// VerifyAdmissionResponse), so the uid is the only thing read from the
// request; nothing else is decoded.
function answer(r) {
    var uid = '';
    try {
        uid = JSON.parse(r.requestText).request.uid;
    } catch (e) {
        r.return(400, 'not an AdmissionReview\n');
        return;
    }
    var response = {uid: uid, allowed: true};
    var patch = r.variables.review_patch;
    if (patch) {
        response.patchType = 'JSONPatch';
        response.patch = patch;
    }
    r.headersOut['Content-Type'] = 'application/json';
    r.return(200, JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: response
    }));
}

export default {answer};
