// The page and the service filters of the admin lists (services, module logs), as their query repositories take them.

/** Page of an admin list: `page` from 1, `per_page` rows. */
export interface PageQuery {
  page: number;
  per_page: number;
}

/** Filters of the admin lists that select by service: its provision status, its product, that product's `server_location`. */
export interface ServiceFilter {
  status?: string;
  product?: string;
  location?: string;
}
