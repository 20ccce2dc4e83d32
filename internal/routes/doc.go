// Package routes is the product's one table of HTTP endpoints. The relay's
// mux, the assembly's mux (internal/app) and the ingress guard all
// classify a request here, so that the scope the guard asks for is the
// scope of the handler that then serves the request: a path cannot be
// judged as one endpoint and served as another.
//
// A Route says two things. Its Kind is the endpoint that serves the
// request, or KindNotFound. Its Area is the family of paths the request
// belongs to (everything under /cdp/, say), which is what the ingress rules
// are written for: a path that no endpoint serves still belongs to an area,
// and is refused or answered 404 by that area's rule, never by a looser
// one.
package routes
