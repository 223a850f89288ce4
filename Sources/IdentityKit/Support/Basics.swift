// What every module shares and needs nothing else for (JSON, base64url, hex, text scanning,
// HTML escaping) lives in the pure IdentityBasics target; IdentityKit hands it on, so a module
// that imports IdentityKit sees it too.
@_exported import IdentityBasics
