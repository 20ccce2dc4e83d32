// The stand-in password manager needs no worker of its own; one makes it
// easy to find among the browser's targets.
