// This module file keeps tools/js/node_modules, where some npm packages
// ship Go sources, out of the cdprelay module's ./... patterns.
module github.com/cdprelay/cdprelay/tools/js

go 1.26
