import { oneNodeOnPglite, readYourWrites } from "./read-your-writes.js";

readYourWrites("PGlite, one node", oneNodeOnPglite);
