import { CreateSeats1764000100000 } from './1764000100000-createSeats';
import { AddProbeBudget1764300000000 } from './1764300000000-addProbeBudget';

export const SPONSORSHIP_API_MIGRATIONS = [CreateSeats1764000100000, AddProbeBudget1764300000000];
