import { readYourWrites, twoNodesOnPostgres } from "./read-your-writes.js";

readYourWrites("PostgreSQL, two nodes", twoNodesOnPostgres);
