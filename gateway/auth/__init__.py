"""Who is asking, and may they: authentication, impersonation and authorization filters, with
the user they leave on each request."""
